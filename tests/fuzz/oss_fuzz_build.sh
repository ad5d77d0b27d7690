#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh the way OSS-Fuzz and ClusterFuzzLite do (clang, their flag
# variables, $OUT), then each built target for 1000 executions from its seed corpus with its
# dictionary. Fails when the script fails, when a seed corpus or dictionary is missing where
# expected, when a target has no binary or does not finish its runs.
#
# Every target is compiled with clang and the sanitizers elsewhere in the suite (the sanitizer
# tree's replay driver holds each fuzz/<name>.cpp), so the script compiles two here (it names
# them in SCALEUP_FUZZ_TARGETS): one of the library alone and the one that links the
# application layer, its two ways of building a target. Its walk over every target (the count
# it builds, a seed corpus zipped for each, the dictionary copied) is checked by a run whose
# compiler is `true`.
# usage: oss_fuzz_build.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work/walk/out" "$work/walk/work" "$work/out" "$work/work"
built=(headers capture_session)

# OSS-Fuzz's address-sanitizer flags (infra/base-images/base-clang): libFuzzer is linked by
# $LIB_FUZZING_ENGINE, the objects are instrumented with fuzzer-no-link. At -O0 where they say
# -O1: the script passes the flags through as they come, which is what is tested, and -O0 halves
# the compile time of the targets (most of this test's).
export CFLAGS="-O0 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS"
export LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
export SRC="$src" SANITIZER=address FUZZING_ENGINE=libfuzzer

failed=()
targets=()
for f in "$src"/fuzz/*.cpp; do
  name=$(basename "$f" .cpp)
  [[ $name == replay ]] || targets+=("$name")
done
# Whether OUT holds NAME's seed corpus, when it has one.
zipped() {  # zipped OUT NAME
  if [[ -d $src/fuzz/corpus/$2 && ! -f $1/fuzz_${2}_seed_corpus.zip ]]; then
    failed+=("$2: seed corpus not zipped")
  fi
}

# The walk: every target, compiled by `true`.
walk=$(CC=true CXX=true OUT="$work/walk/out" WORK="$work/walk/work" SRC_DIR="$src" \
  bash "$src/.clusterfuzzlite/build.sh")
if [[ $walk != "built ${#targets[@]} fuzz targets into $work/walk/out" ]]; then
  failed+=("the script's walk: \"$walk\", not its ${#targets[@]} targets")
fi
for name in "${targets[@]}"; do zipped "$work/walk/out" "$name"; done
dicts=("$work"/walk/out/*.dict)
if [[ ! -f ${dicts[0]} ]]; then
  failed+=("the script's walk: no dictionary copied")
fi

# A name that is no target is refused before anything is compiled.
if SCALEUP_FUZZ_TARGETS="headers no_such_target" CC=true CXX=true OUT="$work/walk/out" \
  WORK="$work/walk/work" SRC_DIR="$src" bash "$src/.clusterfuzzlite/build.sh" 2>/dev/null; then
  failed+=("SCALEUP_FUZZ_TARGETS with an unknown name was taken")
fi

# The build: the two targets with the services' compiler and flags.
export CC=clang CXX=clang++ OUT="$work/out" WORK="$work/work"
SCALEUP_FUZZ_TARGETS="${built[*]}" SRC_DIR="$src" bash "$src/.clusterfuzzlite/build.sh"
for bin in "$OUT"/fuzz_*; do
  case $(basename "$bin") in
    *.zip | *.dict) ;;
    "fuzz_${built[0]}" | "fuzz_${built[1]}") ;;
    *) failed+=("built beyond SCALEUP_FUZZ_TARGETS: $(basename "$bin")") ;;
  esac
done

ran=()
max_jobs=$(nproc 2>/dev/null || echo 1)
for name in "${built[@]}"; do
  bin="$OUT/fuzz_$name"
  zipped "$OUT" "$name"
  # Both read bytes of the wire formats: the dictionary goes with them.
  [[ -f $bin.dict ]] || failed+=("$name: no dictionary")
  if [[ ! -x $bin ]]; then
    failed+=("$name: no binary")
    continue
  fi
  corpus="$work/corpus/$name"
  mkdir -p "$corpus"
  [[ -f ${bin}_seed_corpus.zip ]] && unzip -q -o "${bin}_seed_corpus.zip" -d "$corpus"
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
    echo "fuzz_$name: 1000 runs, $(grep -c . "$log") log lines, with its dictionary"
  else
    tail -n 20 "$log"
    failed+=("$name: did not finish 1000 runs")
  fi
done
if ((${#failed[@]} > 0)); then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "build.sh walks all ${#targets[@]} fuzz targets; built ${built[*]}, each ran 1000 executions"
