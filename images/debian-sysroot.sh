#!/usr/bin/env bash
# Unpacks the Debian packages an image of another architecture needs into a directory, without installing
# them: build-rootfs.sh takes that architecture's runtime (the jmods), libraries, dash and mount from there.
#
#   debian-sysroot.sh ARCH
#
#   ARCH   the Debian architecture (arm64, amd64); this machine must know it: dpkg --add-architecture ARCH
#          and apt-get update (.ci/run does both)
#
# It prints the sysroot's path, SYSROOT. Next to it, SYSROOT.index has one line per path the packages ship,
# PATH<TAB>PACKAGE<TAB>VERSION<TAB>ARCH<TAB>SOURCE<TAB>SOURCE_VERSION, which debian-packages.sh reads in place
# of dpkg-query (that one knows only what this machine has installed).
#
# Each package is fetched at the version apt's lists name as the candidate, with apt-get download, into
# $SATOKEN_DEB_CACHE/ARCH (default ~/.cache/satoken-images/debs/ARCH); a .deb already there is not fetched
# again, so a rebuild needs no network until apt-get update brings newer versions (and then, offline, the
# newest version in the cache is used, with a warning). The sysroot is kept in the
# cache too, named after the exact .debs it holds: unpacking the JDK takes most of a minute, and both
# images, and every rebuild, use the same one.
set -euo pipefail

arch=$1
cache=${SATOKEN_DEB_CACHE:-$HOME/.cache/satoken-images/debs}/$arch
# What build-rootfs.sh takes from the sysroot. apt-get download does not follow dependencies, so the list is
# whole: the runtime's jmods (bookworm ships them in the headless JDK), the C and C++ libraries and zlib it
# loads, dash, and mount with the libraries mount loads.
packages=(openjdk-17-jdk-headless libc6 libgcc-s1 libstdc++6 zlib1g dash mount libmount1 libblkid1 libselinux1
  libpcre2-8-0)

mkdir -p "$cache"
# one apt-cache call (each one reads all the lists): "PKG:ARCH:" then "  Candidate: VERSION"
candidates=$(apt-cache policy "${packages[@]/%/:$arch}" 2>/dev/null \
  | awk '/^[^ ].*:$/ { pkg = substr($0, 1, length($0) - 1) } $1 == "Candidate:" { print pkg "\t" $2 }')
debs=()
for pkg in "${packages[@]}"; do
  version=$(awk -F'\t' -v p="$pkg:$arch" '$1 == p && $2 != "(none)" { print $2 }' <<< "$candidates")
  if [ -z "$version" ]; then
    echo "debian-sysroot.sh: apt knows no $pkg:$arch; run dpkg --add-architecture $arch && apt-get update" >&2
    exit 2
  fi
  # apt-get download's file name: the epoch's colon is written %3a
  deb=$cache/${pkg}_${version//:/%3a}_$arch.deb
  if [ ! -s "$deb" ]; then
    echo "debian-sysroot.sh: downloading $pkg:$arch=$version into $cache" >&2
    # as root, apt warns that it downloads unsandboxed: harmless here
    (cd "$cache" && apt-get download -q "$pkg:$arch=$version" 2>&1 | grep -v 'unsandboxed' >&2) || true
    if [ ! -s "$deb" ]; then
      # offline, with lists newer than the cache: the newest version already here, said loudly
      deb=$(find "$cache" -maxdepth 1 -name "${pkg}_*_$arch.deb" | sort -V | tail -n 1)
      if [ -z "$deb" ]; then
        echo "debian-sysroot.sh: could not download $pkg:$arch=$version, and no version of it is in $cache" >&2
        exit 2
      fi
      echo "debian-sysroot.sh: WARNING: could not download $pkg:$arch=$version; using ${deb##*/}" >&2
    fi
  fi
  debs+=("$deb")
done

sysroot=$cache-sysroot-$(printf '%s\n' "${debs[@]##*/}" | sha256sum | cut -c1-12)
index=$sysroot.index
if [ -e "$sysroot.done" ]; then
  echo "$sysroot"
  exit 0
fi
rm -rf "$sysroot" "$index"
mkdir -p "$sysroot"
for deb in "${debs[@]}"; do
  # Source is absent (the package's own name), a name, or "name (version)" when the binary was rebuilt alone
  IFS=$'\t' read -r name version deb_arch source < <(dpkg-deb -f "$deb" Package Version Architecture Source \
    | awk -F': ' '{ v[$1] = $2 } END { printf "%s\t%s\t%s\t%s\n", v["Package"], v["Version"], v["Architecture"], v["Source"] }')
  source_name=${source%% *} source_version=$version
  [ -n "$source_name" ] || source_name=$name
  case $source in *'('*')') source_version=${source#*(}; source_version=${source_version%)} ;; esac
  # one pass over the data: tar -v names what it unpacks (./path; directories end in /)
  dpkg-deb --fsys-tarfile "$deb" | tar -xv -C "$sysroot" | sed -n 's|^\./\(.*[^/]\)$|/\1|p' \
    | awk -v row="$name	$version	$deb_arch	$source_name	$source_version" '{ print $0 "\t" row }' >> "$index"
done
touch "$sysroot.done"
echo "$sysroot"
