#!/usr/bin/env bash
# The Debian packages as a user gets them (./run package builds the same with cpack):
#   1. cpack builds libscaleup-dev, scaleup, libscaleup-c0, libscaleup-c-dev and (with the
#      plugin) wireshark-scaleup;
#   2. each declares its dependencies;
#   3. unpacked into a scratch root, the headers build tests/consumer/ through find_package and
#      pkg-config, a C11 program builds with `pkg-config scaleup-c` and runs on the shared library,
#      the `scaleup` command runs from the root, and tshark loads the plugin from it;
#   4. lintian's findings are each listed in docs/packaging.md (a new one fails the test).
# usage: package_test.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1
build=$2
work=$3
rm -rf "$work"
mkdir -p "$work/root"

step() { printf '\n== %s\n' "$*"; }

step "cpack"
cpack --config "$build/CPackConfig.cmake" -B "$work/packages" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; exit 1; }
mapfile -t debs < <(find "$work/packages" -maxdepth 1 -name '*.deb' | sort)
printf '%s\n' "${debs[@]##*/}"
want=(libscaleup-dev scaleup)
if compgen -G "$build/capi/libscaleup_c.so.0" >/dev/null; then
  want+=(libscaleup-c0 libscaleup-c-dev)
fi
if compgen -G "$build/wireshark/plugins/*/epan/scaleup.so" >/dev/null; then
  want+=(wireshark-scaleup)
fi
for p in "${want[@]}"; do
  deb=$(printf '%s\n' "${debs[@]}" | grep "/${p}_" || true)
  [[ -n $deb ]] || { echo "no package $p"; exit 1; }
  depends=$(dpkg-deb -f "$deb" Depends)
  echo "$p: Depends: $depends"
  case $p in
    libscaleup-dev) [[ $depends == *libboost-dev* && $depends == *libpcap-dev* ]] ;;
    scaleup) [[ $depends == *libpcap0.8* && $depends == *libstdc++6* ]] ;;
    # The C library needs the C library only: no libstdc++6, no libgcc's unwinder.
    libscaleup-c0) [[ $depends == *libc6* && $depends != *libstdc++* ]] &&
      grep -q 'libscaleup_c\.so\.0 ->' <(dpkg-deb -c "$deb") ;;
    libscaleup-c-dev) [[ $depends == *"libscaleup-c0 ("* && $depends == *libscaleup-dev* ]] &&
      grep -q 'libscaleup_c\.a$' <(dpkg-deb -c "$deb") ;;
    # The Wireshark it loads into, both ends: wireshark-common (>= 4.4), wireshark-common (<< 4.5~).
    wireshark-scaleup)
      ws=$(basename "$(dirname "$(dirname "$(compgen -G "$build/wireshark/plugins/*/epan/scaleup.so")")")")
      next="${ws%.*}.$((${ws#*.} + 1))~"
      [[ $depends == *"wireshark-common (>= $ws)"* && $depends == *"wireshark-common (<< $next)"* &&
        $depends == *libwireshark* ]] ;;
  esac || { echo "$p does not declare what it needs"; exit 1; }
  # The synopsis is the package's own, not one line shared by all of them.
  synopsis=$(dpkg-deb -f "$deb" Description | sed -n 1p)
  echo "$p: $synopsis"
  for other in "${debs[@]}"; do
    [[ $other == "$deb" || $(dpkg-deb -f "$other" Description | sed -n 1p) != "$synopsis" ]] ||
      { echo "$p's synopsis is also ${other##*/}'s"; exit 1; }
  done
  dpkg-deb -x "$deb" "$work/root"
done

step "headers: find_package and pkg-config from the unpacked root"
root=$work/root/usr
cmake -S "$src/tests/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$root" \
  -DEXPECTED_PREFIX="$root" >"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; exit 1; }
cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; exit 1; }
"$work/consumer/scaleup_consumer"
pc_dir=$(dirname "$(find "$root" -name scaleup.pc | head -n 1)")
cflags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --define-prefix --cflags scaleup)
echo "pkg-config --cflags scaleup: $cflags"
printf '#include <scaleup/wire/frame.hpp>\nint main() { return scaleup::wire::header_size(scaleup::wire::encap::udp4) == 42 ? 0 : 1; }\n' \
  >"$work/pc.cpp"
[[ $cflags == *-std=c++20* ]] || { echo "pkg-config's Cflags lack -std=c++20"; exit 1; }
# shellcheck disable=SC2086  # cflags is a word list
g++ $cflags "$work/pc.cpp" -o "$work/pc"
"$work/pc"

if [[ " ${want[*]} " == *" libscaleup-c0 "* ]]; then
  step "the C ABI: a C11 program built with pkg-config scaleup-c, run on the shared library"
  pc_dir=$(dirname "$(find "$root" -name scaleup-c.pc | head -n 1)")
  c_flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --define-prefix --cflags --libs scaleup-c)
  echo "pkg-config --cflags --libs scaleup-c: $c_flags"
  # shellcheck disable=SC2086  # c_flags is a word list
  gcc -std=c11 -Wall -Wextra -Werror -pedantic "$src/capi/tests/roundtrip.c" \
    "$src/capi/tests/transport.c" $c_flags \
    -o "$work/c_roundtrip"
  readelf -d "$work/c_roundtrip" | grep -q 'NEEDED.*libscaleup_c\.so\.0' ||
    { echo "the C program is not linked to libscaleup_c.so.0"; exit 1; }
  LD_LIBRARY_PATH=$(dirname "$(find "$root" -name 'libscaleup_c.so.0' | head -n 1)") \
    "$work/c_roundtrip"
fi

step "the scaleup command from the root"
"$root/bin/scaleup" gen basic -o "$work/basic.pcap" --count 2 --encap udp4
"$root/bin/scaleup" dump "$work/basic.pcap" >"$work/dump.txt"
head -n 3 "$work/dump.txt"
(($(grep -c udp4 "$work/dump.txt") >= 2)) || { echo "dump from the package shows no udp4 frames"; exit 1; }
# The default command profile ships as a file, and reads as the built-in one.
prof=$root/share/scaleup/profiles/default.json
[[ -f $prof ]] || { echo "the package ships no $prof"; exit 1; }
"$root/bin/scaleup" dump --profile "$prof" "$work/basic.pcap" | cmp - "$work/dump.txt" ||
  { echo "dump --profile $prof differs from the built-in profile"; exit 1; }

if [[ " ${want[*]} " == *" wireshark-scaleup "* ]]; then
  step "tshark loads the plugin from the root"
  so=$(find "$root" -name scaleup.so | head -n 1)
  [[ $so == */wireshark/plugins/*/epan/scaleup.so ]] ||
    { echo "the plugin is not in Wireshark's plugin layout: $so"; exit 1; }
  # tshark as root ignores WIRESHARK_PLUGIN_DIR: run it as nobody, from a copy nobody can reach.
  plugins=$(mktemp -d)
  cp -r "$(dirname "$(dirname "$(dirname "$so")")")"/. "$plugins"/
  chmod -R a+rX "$plugins"
  run_as=()
  if ((EUID == 0)); then run_as=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
  # A sanitizer build of the plugin needs GCC's runtimes in tshark, which is not built with them.
  preload=()
  if readelf -d "$so" | grep -q 'NEEDED.*libasan'; then
    preload=(LD_PRELOAD="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libubsan.so)"
             ASAN_OPTIONS=detect_leaks=0)
  fi
  found=$(env "${preload[@]}" WIRESHARK_PLUGIN_DIR="$plugins" HOME=/tmp "${run_as[@]}" tshark -G protocols \
    2>/dev/null | awk -F'\t' '$3 == "sue"' || true)
  rm -rf "$plugins"
  [[ -n $found ]] || { echo "tshark did not load the plugin"; exit 1; }
  echo "tshark: $found"
fi

if command -v lintian >/dev/null 2>&1; then
  step "lintian"
  lintian --no-tag-display-limit "${debs[@]}" >"$work/lintian.txt" 2>&1 || true
  cat "$work/lintian.txt"
  unlisted=()
  while read -r tag; do
    grep -q -- "\`$tag\`" "$src/docs/packaging.md" || unlisted+=("$tag")
  done < <(sed -n 's/^[EWIPX]: [^ ]*: \([a-z0-9-]*\).*/\1/p' "$work/lintian.txt" | sort -u)
  if ((${#unlisted[@]} > 0)); then
    echo "lintian findings not listed in docs/packaging.md: ${unlisted[*]}"
    exit 1
  fi
fi
echo "packages: built, unpacked, used; every lintian finding is listed"
