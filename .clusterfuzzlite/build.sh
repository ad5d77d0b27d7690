#!/bin/bash -eu
# Builds every scaleup fuzz target for OSS-Fuzz / ClusterFuzzLite (their build contract: $CC,
# $CXX, $CFLAGS, $CXXFLAGS, $LIB_FUZZING_ENGINE in, binaries and their seed corpora and
# dictionaries out in $OUT). Each fuzz/<name>.cpp but the replay driver is one target,
# fuzz_<name>, with fuzz/corpus/<name>/ zipped as fuzz_<name>_seed_corpus.zip and, where the
# target reads wire formats, fuzz/scaleup.dict as fuzz_<name>.dict. The library is header-only;
# the application layer (app/: the capture session) is compiled first, with the same flags, for
# the targets that include it. libpcap is linked for the capture targets (pcap/ may use it).
# SCALEUP_FUZZ_TARGETS, when set, names the targets to build (fuzz/<name>.cpp's names, separated
# by spaces): one target rebuilt with the services' flags while working on it, or a test of this
# script that need not compile them all. Unset: every target, as the services build.
src=${SRC_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$src"

# Targets whose input is bytes of the formats: they get the dictionary. The others read event
# scripts for state machines, where the formats' constants mean nothing.
format_targets=" dissect_frame headers unpacker tofu_reassembly rdma_packet capture_reader read_frame capture_session "

# Compiles run in the background, as many at once as there are processors; each leaves its
# output and exit status in $WORK, and the script fails after all have ended if any failed.
max_jobs=$(nproc 2>/dev/null || echo 1)
compile() {  # compile NAME COMMAND...
  local name=$1
  shift
  while (($(jobs -rp | wc -l) >= max_jobs)); do wait -n || true; done
  { "$@" >"$WORK/$name.log" 2>&1; echo $? >"$WORK/$name.status"; } &
  pids[$name]=$!
}
compiled() {  # compiled NAME...: waits for them, then prints the failures' output
  local name failed=0
  for name in "$@"; do
    wait "${pids[$name]}" || true
    if [[ $(cat "$WORK/$name.status" 2>/dev/null) != 0 ]]; then
      cat "$WORK/$name.log" >&2
      failed=1
    fi
  done
  return $failed
}
declare -A pids=()

# The targets, those that include the application layer apart: they are compiled after it.
selected=" ${SCALEUP_FUZZ_TARGETS:-} "
plain=() later=()
for f in fuzz/*.cpp; do
  name=$(basename "$f" .cpp)
  [[ $name == replay ]] && continue
  [[ -n ${SCALEUP_FUZZ_TARGETS:-} && $selected != *" $name "* ]] && continue
  if [[ -d fuzz/corpus/$name ]] && compgen -G "fuzz/corpus/$name/*" >/dev/null; then
    rm -f "$OUT/fuzz_${name}_seed_corpus.zip"
    zip -q -j "$OUT/fuzz_${name}_seed_corpus.zip" fuzz/corpus/"$name"/*
  fi
  if [[ $format_targets == *" $name "* ]]; then
    cp fuzz/scaleup.dict "$OUT/fuzz_$name.dict"
  fi
  if grep -q '^#include "app/' "$f"; then
    later+=("$f")
  else
    plain+=("$f")
  fi
done

for name in ${SCALEUP_FUZZ_TARGETS:-}; do
  if [[ $name == replay || ! -f fuzz/$name.cpp ]]; then
    echo "SCALEUP_FUZZ_TARGETS: no fuzz target $name (fuzz/$name.cpp)" >&2
    exit 1
  fi
done

# The application layer, once, for the targets that include it (zlib and nlohmann-json are its).
app_objects=() app_names=()
if ((${#later[@]} > 0)); then
  for f in app/*.cpp; do
    name=app_$(basename "$f" .cpp)
    # shellcheck disable=SC2086
    compile "$name" $CXX $CXXFLAGS -std=c++20 -Iinclude -I. -c "$f" -o "$WORK/$name.o"
    app_objects+=("$WORK/$name.o")
    app_names+=("$name")
  done
fi

# The targets without it while it compiles; then those with it.
names=()
for f in "${plain[@]}"; do
  name=$(basename "$f" .cpp)
  # shellcheck disable=SC2086  # the flag variables are word lists by contract
  compile "fuzz_$name" $CXX $CXXFLAGS -std=c++20 -Iinclude -Ifuzz "$f" -o "$OUT/fuzz_$name" \
    $LIB_FUZZING_ENGINE -lpcap
  names+=("fuzz_$name")
done
compiled "${app_names[@]}" || exit 1
for f in "${later[@]}"; do
  name=$(basename "$f" .cpp)
  # shellcheck disable=SC2086
  compile "fuzz_$name" $CXX $CXXFLAGS -std=c++20 -Iinclude -Ifuzz -I. "$f" "${app_objects[@]}" \
    -o "$OUT/fuzz_$name" $LIB_FUZZING_ENGINE -lpcap -lz -lpthread
  names+=("fuzz_$name")
done
compiled "${names[@]}" || exit 1
echo "built ${#names[@]} fuzz targets into $OUT"
