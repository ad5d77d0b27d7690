#!/bin/bash -eu
# Builds every scaleup fuzz target for OSS-Fuzz / ClusterFuzzLite (their build contract: $CC,
# $CXX, $CFLAGS, $CXXFLAGS, $LIB_FUZZING_ENGINE in, binaries and their seed corpora and
# dictionaries out in $OUT). Each fuzz/<name>.cpp but the replay driver is one target,
# fuzz_<name>, with fuzz/corpus/<name>/ zipped as fuzz_<name>_seed_corpus.zip and, where the
# target reads wire formats, fuzz/scaleup.dict as fuzz_<name>.dict. The library is header-only;
# the application layer (app/: the capture session) is compiled first, with the same flags, for
# the targets that include it. libpcap is linked for the capture targets (pcap/ may use it).
src=${SRC_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$src"

# Targets whose input is bytes of the formats: they get the dictionary. The others read event
# scripts for state machines, where the formats' constants mean nothing.
format_targets=" dissect_frame headers unpacker tofu_reassembly rdma_packet capture_reader read_frame capture_session "

# The application layer, once, for the targets that include it (zlib and nlohmann-json are its).
app_objects=()
for f in app/*.cpp; do
  # shellcheck disable=SC2086
  $CXX $CXXFLAGS -std=c++20 -Iinclude -I. -c "$f" -o "$WORK/app_$(basename "$f" .cpp).o"
  app_objects+=("$WORK/app_$(basename "$f" .cpp).o")
done

built=0
for f in fuzz/*.cpp; do
  name=$(basename "$f" .cpp)
  [[ $name == replay ]] && continue
  # shellcheck disable=SC2086  # the flag variables are word lists by contract
  app=()
  if grep -q '^#include "app/' "$f"; then app=(-I. "${app_objects[@]}" -lz -lpthread); fi
  $CXX $CXXFLAGS -std=c++20 -Iinclude -Ifuzz "$f" "${app[@]}" -o "$OUT/fuzz_$name" \
    $LIB_FUZZING_ENGINE -lpcap
  if [[ -d fuzz/corpus/$name ]] && compgen -G "fuzz/corpus/$name/*" >/dev/null; then
    rm -f "$OUT/fuzz_${name}_seed_corpus.zip"
    zip -q -j "$OUT/fuzz_${name}_seed_corpus.zip" fuzz/corpus/"$name"/*
  fi
  if [[ $format_targets == *" $name "* ]]; then
    cp fuzz/scaleup.dict "$OUT/fuzz_$name.dict"
  fi
  built=$((built + 1))
done
echo "built $built fuzz targets into $OUT"
