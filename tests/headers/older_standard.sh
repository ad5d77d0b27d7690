#!/usr/bin/env bash
# Every public header, compiled alone with an older standard (-std=c++17), must stop at once with
# scaleup's own message that C++20 is needed (scaleup/wire/version.hpp), and nothing else: no error
# from inside the library. Fails on a header that compiles, or whose first error is another one.
# usage: older_standard.sh CXX INCLUDE_DIR [EXTRA_FLAGS...]
set -uo pipefail
cxx=$1
inc=$2
shift 2
bad=0
n=0
while IFS= read -r h; do
  n=$((n + 1))
  rel=${h#"$inc"/}
  out=$(printf '#include "%s"\n' "$rel" | "$cxx" -std=c++17 -fsyntax-only -x c++ -I"$inc" "$@" - 2>&1)
  status=$?
  first=$(printf '%s\n' "$out" | grep -m1 -E '(error|fatal error):' || true)
  errors=$(printf '%s\n' "$out" | grep -cE '(error|fatal error):' || true)
  if ((status == 0)); then
    echo "$rel: compiles with -std=c++17"
    bad=$((bad + 1))
  elif [[ $first != *"scaleup needs C++20"* ]] || ((errors > 2)); then
    echo "$rel: first of $errors errors is not scaleup's: $first"
    bad=$((bad + 1))
  fi
done < <(find "$inc/scaleup" -name '*.hpp' | sort)
echo "$n headers, $bad without the C++20 message"
((bad == 0 && n > 0))
