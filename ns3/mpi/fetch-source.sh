#!/usr/bin/env bash
# Usage: fetch-source.sh DIR
#
# Debian's libns3-dev is built with --disable-mpi, so ns-3's MPI module is not installed. This
# takes src/mpi/ from the Debian source package of the installed version (ns3, 3.37-2 when
# libns3-dev is not installed) into DIR/<version>/mpi/ and prints that path as its last line.
# apt-get downloads through a sources list of its own under DIR/apt/ (the machine's apt
# configuration is only read, never changed) and checks the files against the signed index.
# A second run finds DIR/<version>/mpi/ and does nothing, without network.
#
# Environment: NS3_SOURCE_VERSION (default: the installed libns3-dev's, else 3.37-2),
# NS3_SOURCE_MIRROR (default http://deb.debian.org/debian), NS3_SOURCE_SUITE (default: this
# system's codename if it is Debian, else bookworm).
set -euo pipefail

die() {
  echo "fetch-source.sh: $*" >&2
  exit 1
}

(($# == 1)) || die "usage: fetch-source.sh DIR"
mkdir -p "$1"
dir=$(cd "$1" && pwd)

version=${NS3_SOURCE_VERSION:-$(dpkg-query -W -f='${source:Version}' libns3-dev 2>/dev/null || true)}
version=${version:-3.37-2}
out=$dir/$version/mpi
# The extracted tree is moved into place only when complete: its presence is the cache hit.
if [[ -f $out/model/mpi-interface.cc ]]; then
  echo "$out"
  exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "apt-get is needed to fetch Debian's ns3 source package"
mirror=${NS3_SOURCE_MIRROR:-http://deb.debian.org/debian}
suite=${NS3_SOURCE_SUITE:-}
if [[ -z $suite && -r /etc/os-release ]]; then
  # shellcheck source=/dev/null
  suite=$(. /etc/os-release && if [[ ${ID:-} == debian ]]; then echo "${VERSION_CODENAME:-}"; fi)
fi
suite=${suite:-bookworm}

apt_dir=$dir/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache"
# -updates as well: the installed version may have come from there.
printf 'deb-src %s %s main\n' "$mirror" "$suite" "$mirror" "$suite-updates" >"$apt_dir/src.list"
apt_opts=(
  -o "Dir::Etc::sourcelist=$apt_dir/src.list" -o Dir::Etc::sourceparts=/nonexistent
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
  # The _apt user cannot write into a home directory: download as the caller.
  -o "APT::Sandbox::User=$(id -un)"
)

work=$dir/$version/.work
rm -rf "$work"
mkdir -p "$work/src"
trap 'rm -rf "$work"' EXIT

echo "fetching Debian's ns3 $version source package ($suite, $mirror)" >&2
# --error-on=any: an unreachable mirror is otherwise only a warning.
apt-get "${apt_opts[@]}" -q --error-on=any update >&2 ||
  die "cannot update the source index from $mirror ($suite): network down or mirror unreachable"
(cd "$work" && apt-get "${apt_opts[@]}" -q source --download-only "ns3=$version" >&2) ||
  die "cannot download the source package ns3=$version from $mirror ($suite)"

orig=$(compgen -G "$work/ns3_*.orig.tar.*" | head -n 1) || die "no .orig tarball in the download"
debian=$(compgen -G "$work/ns3_*.debian.tar.*" | head -n 1) || die "no .debian tarball"

# Only the members needed, not the whole 39 MB tree. The package's root is the tarball's top
# directory (ns-allinone-<upstream>/), which the patches take as theirs.
tar -xf "$orig" -C "$work/src" --strip-components=1 --wildcards --no-wildcards-match-slash \
  '*/ns-3*/src/mpi' '*/ns-3*/LICENSE' ||
  die "src/mpi/ not found in $(basename "$orig")"
tar -xf "$debian" -C "$work" debian/patches

# Debian's patches for the parts taken here (none in 3.37-2); only their src/mpi/ hunks.
series=$work/debian/patches/series
if [[ -f $series ]]; then
  while read -r patch _; do
    [[ -n $patch && $patch != \#* ]] || continue
    grep -q '^+++ .*/src/mpi/' "$work/debian/patches/$patch" || continue
    command -v filterdiff >/dev/null 2>&1 ||
      die "debian/patches/$patch changes src/mpi/: patchutils (filterdiff) is needed to apply it"
    echo "applying debian/patches/$patch (its src/mpi/ part)" >&2
    filterdiff -i '*/src/mpi/*' "$work/debian/patches/$patch" |
      patch -d "$work/src" -p1 -s --no-backup-if-mismatch >&2 ||
      die "debian/patches/$patch does not apply to src/mpi/"
  done <"$series"
fi

mpi=$(compgen -G "$work/src/*/src/mpi" | head -n 1) || die "src/mpi/ missing after extraction"
license=$(compgen -G "$work/src/*/LICENSE" | head -n 1) || true
if [[ -n $license ]]; then
  cp "$license" "$mpi/LICENSE"
fi
rm -rf "$out"
mv "$mpi" "$out"
# The source index (20 MB) is only needed for another version: fetched again then.
rm -rf "$apt_dir"
echo "$out"
