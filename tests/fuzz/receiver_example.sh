#!/usr/bin/env bash
# The README's fuzz target around a receiver of one's own (examples/fuzz_receiver), run two ways:
#   receiver_example.sh replay BINARY SEEDS     the target built with the replay driver (any
#                                               compiler): the custom mutator over each seed
#   receiver_example.sh libfuzzer SOURCE WORK   built with clang and libFuzzer, run 20000 times
# Either way at least 60 % of the inputs must get past the receiver's R-CRC check (libFuzzer's
# byte mutations alone get about 0.1 % past it; with the mutator 75 % to 90 %: it leaves one
# repair out in 16 mutations, and the corpus keeps inputs that are not SUE frames when they add
# coverage), and under libFuzzer the custom mutator must be the one used.
set -euo pipefail
mode=$1

# The receiver's counts (printed at exit): at least 60 % of its frames past the R-CRC check.
check_counts() {
  local line frames past
  line=$(grep -E '^receiver: [0-9]+ frames, [0-9]+ past the R-CRC check' "$1" | tail -n 1) || {
    echo "no counts from the receiver"
    return 1
  }
  frames=$(sed -E 's/^receiver: ([0-9]+) frames.*/\1/' <<<"$line")
  past=$(sed -E 's/^receiver: [0-9]+ frames, ([0-9]+) past.*/\1/' <<<"$line")
  echo "$line"
  if ((frames < 1000 || past * 10 < frames * 6)); then
    echo "too few frames past the R-CRC check: $past of $frames"
    return 1
  fi
}

case $mode in
  replay)
    bin=$2 seeds=$3
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    "$bin" --mutate 500 "$seeds" >"$log" 2>&1 || {
      cat "$log"
      exit 1
    }
    grep -E '^(replayed|mutated)' "$log"
    check_counts "$log"
    ;;
  libfuzzer)
    src=$2 work=$3
    rm -rf "$work"
    mkdir -p "$work/corpus"
    cp "$src"/examples/fuzz_receiver/seeds/* "$work/corpus/"
    # -O0: the compile is most of this test (about 40 s at -O1, 26 s at -O0); the 20000 runs take
    # a second or three either way.
    clang++ -std=c++20 -O0 -gline-tables-only -fsanitize=fuzzer,address,undefined \
      -fno-sanitize-recover=undefined \
      -I"$src/include" "$src/examples/fuzz_receiver/fuzz_target.cpp" \
      "$src/examples/fuzz_receiver/receiver.cpp" -o "$work/fuzz_receiver"
    log=$work/fuzz.log
    if ! "$work/fuzz_receiver" -runs=20000 -seed=1 "$work/corpus" >"$log" 2>&1 ||
      ! grep -q 'Done 20000 runs' "$log"; then
      tail -n 30 "$log"
      exit 1
    fi
    # libFuzzer names the mutation that found each new input: ours is "Custom".
    if ! grep -q 'MS: [0-9]* Custom-' "$log"; then
      echo "libFuzzer did not use the custom mutator"
      exit 1
    fi
    echo "$(grep -c 'NEW ' "$log") new inputs, $(grep -o 'cov: [0-9]*' "$log" | tail -n 1)"
    check_counts "$log"
    ;;
  *)
    echo "usage: $0 replay BINARY SEEDS | libfuzzer SOURCE WORK" >&2
    exit 2
    ;;
esac
