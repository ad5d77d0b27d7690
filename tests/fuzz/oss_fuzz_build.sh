#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh the way OSS-Fuzz and ClusterFuzzLite do (clang, their flag
# variables, $OUT), then each built target for 1000 executions from its seed corpus with its
# dictionary. Fails when the script fails, when a fuzz/<name>.cpp has no binary, when a seed
# corpus or dictionary is missing where expected, or when a target does not finish its runs.
# usage: oss_fuzz_build.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work/out" "$work/work"
export CC=clang CXX=clang++
# OSS-Fuzz's address-sanitizer flags (infra/base-images/base-clang): libFuzzer is linked by
# $LIB_FUZZING_ENGINE, the objects are instrumented with fuzzer-no-link. At -O0 where they say
# -O1: the script passes the flags through as they come, which is what is tested, and -O0 halves
# the compile time of the targets (most of this test's).
export CFLAGS="-O0 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
export LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
export OUT="$work/out" WORK="$work/work" SRC="$src" SANITIZER=address FUZZING_ENGINE=libfuzzer
SRC_DIR="$src" bash "$src/.clusterfuzzlite/build.sh"

expected=0
failed=()
ran=()
max_jobs=$(nproc 2>/dev/null || echo 1)
for f in "$src"/fuzz/*.cpp; do
  name=$(basename "$f" .cpp)
  [[ $name == replay ]] && continue
  expected=$((expected + 1))
  bin="$OUT/fuzz_$name"
  if [[ ! -x $bin ]]; then
    failed+=("$name: no binary")
    continue
  fi
  corpus="$work/corpus/$name"
  mkdir -p "$corpus"
  if [[ -f ${bin}_seed_corpus.zip ]]; then
    unzip -q -o "${bin}_seed_corpus.zip" -d "$corpus"
  elif [[ -d $src/fuzz/corpus/$name ]]; then
    failed+=("$name: seed corpus not zipped")
  fi
  dict=()
  [[ -f $bin.dict ]] && dict=(-dict="$bin.dict")
  # The targets run side by side, as many as there are processors.
  while (($(jobs -rp | wc -l) >= max_jobs)); do wait -n || true; done
  log="$work/$name.log"
  { "$bin" -runs=1000 "${dict[@]}" "$corpus" >"$log" 2>&1; echo $? >"$log.status"; } &
  ran+=("$name")
done
wait
for name in "${ran[@]}"; do
  log="$work/$name.log"
  if [[ $(cat "$log.status") == 0 ]] && grep -q "Done 1000 runs" "$log"; then
    dict=""
    [[ -f $OUT/fuzz_$name.dict ]] && dict=", with its dictionary"
    echo "fuzz_$name: 1000 runs, $(grep -c . "$log") log lines$dict"
  else
    tail -n 20 "$log"
    failed+=("$name: did not finish 1000 runs")
  fi
done
if ((${#failed[@]} > 0)); then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "all $expected fuzz targets built by build.sh and ran 1000 executions each"
