#!/usr/bin/env bash
# The Wireshark plugin against another Wireshark than the machine's: Debian 13's (4.4), in a
# Debian 13 root made with mmdebstrap and kept in a cache directory (`./run compat` runs this).
#
# usage: tests/compat/debian13.sh test | package
#   test     configure and build the scaleup command, the plugin and the docs generator in the
#            root, against its Wireshark, and run the Wireshark tests (ctest -L wireshark: the
#            plugin's cases of tests/wireshark and the Lua dissector's) in its tshark
#   package  the same build, then the Debian packages: the package_debs test (dependencies,
#            installing, lintian with the findings docs/packaging.md lists) and cpack; the .debs
#            land in build/packages-debian13/
#
# The root is $SCALEUP_COMPAT_CACHE/trixie (default ~/.cache/scaleup/compat/trixie), made once
# with the packages below and reused; it is made again when that list changes, when a previous
# making was interrupted, or with SCALEUP_COMPAT_REFRESH=1 (to pick up a Debian point release).
# The build directory (/build in the root) and ccache's (/ccache) stay in it too, so that a
# second run rebuilds only what changed. The source tree is mounted read-only at /src, in a
# mount namespace of this script's own: nothing stays mounted after it. Needs root (mmdebstrap,
# chroot, mounts).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
what=${1:-test}
case $what in
  test | package) ;;
  *)
    echo "usage: $0 test | package" >&2
    exit 2
    ;;
esac

if ((EUID != 0)); then
  echo "$0: making and entering the Debian 13 root needs root (mmdebstrap, chroot, mount)" >&2
  exit 1
fi
for tool in mmdebstrap unshare chroot; do
  command -v "$tool" >/dev/null || { echo "$0: $tool not found (./run compat installs mmdebstrap)" >&2; exit 1; }
done

cache=${SCALEUP_COMPAT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scaleup/compat}
root=$cache/trixie
stamp=$root/.scaleup-packages
jobs=$(nproc 2>/dev/null || echo 2)

# What the build, the tests and the packages need in the root (Debian 13 names).
packages=(
  tshark wireshark-dev                     # Wireshark 4.4 and its headers and CMake package
  cmake ninja-build g++ pkgconf ccache
  libboost-dev libpcap-dev zlib1g-dev doctest-dev
  libcli11-dev libfmt-dev nlohmann-json3-dev  # the scaleup command the tests compare against
  python3 python3-scapy                    # tests/wireshark
  tcpdump                                  # its capture of real UDP on lo (display filters)
  dpkg-dev file lintian                    # cpack's dependencies and the package check
)
wanted=$(printf '%s\n' "${packages[@]}" | sort)

step() { printf '\n==> %s\n' "$*"; }

make_root() {
  step "mmdebstrap trixie $root (${#packages[@]} packages)"
  mkdir -p "$cache"
  rm -rf "$root.tmp"
  local include
  include=$(IFS=,; echo "${packages[*]}")
  mmdebstrap --variant=apt --include="$include" trixie "$root.tmp"
  printf '%s\n' "$wanted" >"$root.tmp/.scaleup-packages"
  rm -rf "$root"
  mv "$root.tmp" "$root"
}

if [[ ${SCALEUP_COMPAT_REFRESH:-0} == 1 ]]; then
  make_root
elif [[ ! -f $stamp ]]; then
  make_root
elif [[ $(cat "$stamp") != "$wanted" ]]; then
  echo "the root's package list differs from this script's: making it again"
  make_root
else
  step "reusing $root ($(chroot "$root" dpkg-query -W -f='tshark ${Version}' tshark))"
fi

# The commands run inside the root: configure (once), build, test or package.
inner=$(
  cat <<'EOF'
set -euo pipefail
cd /build
step() { printf '\n==> %s\n' "$*"; }
if [[ ! -f CMakeCache.txt ]]; then
  step "configure /build against $(tshark -v | head -n 1)"
  cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
targets=(scaleup_cli scaleup_wireshark scaleup_docgen)
step "build ${targets[*]}"
cmake --build /build -j "$JOBS" --target "${targets[@]}"
if [[ $WHAT == test ]]; then
  step "ctest -L wireshark"
  ctest --test-dir /build -L wireshark --output-on-failure -j "$JOBS"
else
  # What the packages hold is built above: the headers, the scaleup command, the plugin.
  step "ctest -R package_debs"
  ctest --test-dir /build -R '^package_debs$' --output-on-failure
  step "cpack"
  rm -rf /build/packages
  cpack --config /build/CPackConfig.cmake -B /build/packages >/build/cpack.log
  ls -l /build/packages/*.deb
fi
EOF
)

mkdir -p "$root/src" "$root/build" "$root/ccache"
step "in the root: $what"
unshare --mount --propagation private -- bash -euo pipefail -c '
  root=$1 src=$2; shift 2
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs tmpfs "$root/tmp"
  mount --bind "$src" "$root/src"
  mount -o remount,bind,ro "$root/src"
  exec chroot "$root" "$@"
' bash "$root" "$src" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  CCACHE_DIR=/ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache JOBS="$jobs" WHAT="$what" \
  bash -c "$inner"

if [[ $what == package ]]; then
  out=$src/build/packages-debian13
  mkdir -p "$out"
  rm -f "$out"/*.deb
  cp "$root"/build/packages/*.deb "$out"/
  step "Debian 13 packages in $out"
  ls -l "$out"
fi
