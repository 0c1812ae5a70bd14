#!/usr/bin/env bash
# Records which Debian packages the files build-rootfs.sh copied from this machine came from, inside the
# image's root OUT:
#
#   debian-packages.sh OUT PROGRAM < COPIED
#
#   COPIED   one line per copied file or tree: IMAGE_PATH<TAB>HOST_PATH
#
# With DEBIAN_PACKAGES_INDEX naming the file list debian-sysroot.sh wrote (for an image of another
# architecture), HOST_PATH is the path a package shipped the file as, and that list, not dpkg-query, says
# which package, version and source it came from.
#
# It writes
#   OUT/usr/share/satoken/debian-packages.txt            IMAGE_PATH, package, version, architecture, source
#   OUT/usr/share/satoken/sbom/PROGRAM-debian.cdx.json   the packages as a CycloneDX 1.6 SBOM, one component
#                                                        each with its purl (pkg:deb/<os>/<name>@<version>)
#   OUT/var/lib/dpkg/status.d/PACKAGE                    a dpkg status stanza per package: the place image
#                                                        scanners read in distroless-style images, which
#                                                        have no /var/lib/dpkg/status
#
# The owner of a file is what dpkg-query -S says of its path, of the file a link resolves to, or of the same
# path with or without /usr (a merged-/usr system installs /lib/x as /usr/lib/x and either may be recorded).
# A file no package owns is listed with "-" and named on stderr; without dpkg-query every file is, and no
# SBOM or stanza is written. The output depends only on the input and the installed packages (no time
# stamps, no random serial number), so two builds on the same machine write the same files.
set -euo pipefail

out=$1 program=$2
share=$out/usr/share/satoken
mkdir -p "$share"

index=${DEBIAN_PACKAGES_INDEX:-}

# The row (PACKAGE<TAB>VERSION<TAB>ARCH<TAB>SOURCE<TAB>SOURCE_VERSION) of the package in $index that ships
# PATH as it is or with or without /usr, or nothing.
indexed_owner() {
  local path=$1
  awk -F'\t' -v a="$path" -v b="/usr$path" -v c="${path#/usr}" \
    '$1 == a || $1 == b || $1 == c { print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6; exit }' "$index"
}

# The package (as dpkg-query names it, maybe with :arch) that installed PATH, or nothing.
owner() {
  local path=$1 real candidates c pkgs
  candidates=("$path")
  real=$(readlink -f "$path" 2>/dev/null || true)
  if [ -n "$real" ] && [ "$real" != "$path" ]; then candidates+=("$real"); fi
  for c in "${candidates[@]}"; do
    case $c in
      /usr/bin/* | /usr/sbin/* | /usr/lib/* | /usr/lib64/*) candidates+=("${c#/usr}") ;;
      /bin/* | /sbin/* | /lib/* | /lib64/*) candidates+=("/usr$c") ;;
    esac
  done
  for c in "${candidates[@]}"; do
    # "pkg1:amd64, pkg2: PATH"; diversion lines name the path too and are skipped
    pkgs=$(dpkg-query -S "$c" 2>/dev/null | awk -v p="$c" '
      index($0, "diversion ") != 1 {
        n = length($0) - length(p) - 2
        if (n > 0 && substr($0, n + 1) == ": " p) { print substr($0, 1, n); exit }
      }') || true
    if [ -n "$pkgs" ]; then
      echo "${pkgs%%, *}"
      return
    fi
  done
}

# purl version and qualifier values: percent-encode what is not unreserved (Debian versions have + and :)
purl_encode() {
  local s=$1 out= c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      [A-Za-z0-9._~-]) out+=$c ;;
      *) out+=$(printf '%%%02X' "'$c") ;;
    esac
  done
  printf '%s' "$out"
}

have_dpkg=false
command -v dpkg-query >/dev/null 2>&1 && have_dpkg=true
[ -z "$index" ] || have_dpkg=true
$have_dpkg || echo "debian-packages.sh: dpkg-query not found: the image's packages are not recorded" >&2

# rows: IMAGE_PATH<TAB>PACKAGE<TAB>VERSION<TAB>ARCH<TAB>SOURCE<TAB>SOURCE_VERSION
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
while IFS=$'\t' read -r image_path host_path; do
  [ -n "$image_path" ] || continue
  pkg=
  if [ -n "$index" ]; then
    row=$(indexed_owner "$host_path")
    if [ -n "$row" ]; then
      printf '%s\t%s\n' "$image_path" "$row" >> "$rows"
      continue
    fi
  elif $have_dpkg; then
    pkg=$(owner "$host_path")
  fi
  if [ -z "$pkg" ]; then
    $have_dpkg && echo "debian-packages.sh: $image_path: no Debian package owns $host_path" >&2
    printf '%s\t-\t-\t-\t-\t-\n' "$image_path" >> "$rows"
    continue
  fi
  dpkg-query -W -f="$image_path"'\t${Package}\t${Version}\t${Architecture}\t${source:Package}\t${source:Version}\n' \
    "$pkg" >> "$rows"
done
sort -u -o "$rows" "$rows"

{
  if [ -n "$index" ]; then
    echo "# The files of this image that were taken from Debian packages downloaded by the build (for an"
    echo "# architecture other than the build machine's), and the package each came from. The image has no"
    echo "# package manager: rebuild it after apt-get update to take a package's security fixes."
  else
    echo "# The files of this image that were copied from the build machine, and the Debian package each came"
    echo "# from (dpkg-query -S on that machine). The image has no package manager: rebuild it on an updated"
    echo "# machine to take a package's security fixes."
  fi
  printf '# image path\tpackage\tversion\tarchitecture\tsource package\tsource version\n'
  cat "$rows"
} > "$share/debian-packages.txt"

$have_dpkg || exit 0

os_id=debian os_version=
if [ -r /etc/os-release ]; then
  os_id=$(. /etc/os-release && echo "${ID:-debian}")
  os_version=$(. /etc/os-release && echo "${VERSION_ID:-}")
fi
distro=$os_id${os_version:+-$os_version}

# one stanza and one SBOM component per package, with the image paths it provided
mkdir -p "$out/var/lib/dpkg/status.d" "$share/sbom"
components=()
while IFS=$'\t' read -r name version arch source source_version; do
  {
    echo "Package: $name"
    echo "Status: install ok installed"
    if [ "$source" != "$name" ] || [ "$source_version" != "$version" ]; then
      if [ "$source_version" != "$version" ]; then
        echo "Source: $source ($source_version)"
      else
        echo "Source: $source"
      fi
    fi
    echo "Version: $version"
    echo "Architecture: $arch"
  } > "$out/var/lib/dpkg/status.d/$name"

  purl="pkg:deb/$os_id/$name@$(purl_encode "$version")?arch=$arch&distro=$distro"
  if [ "$source" != "$name" ]; then
    purl+="&upstream=$(purl_encode "$source")"
  fi
  files=$(awk -F'\t' -v n="$name" '$2 == n { printf "%s{\"name\":\"satoken:image-path\",\"value\":\"%s\"}", sep, $1; sep = "," }' "$rows")
  components+=("{\"type\":\"library\",\"bom-ref\":\"$purl\",\"name\":\"$name\",\"version\":\"$version\",\"purl\":\"$purl\",\"properties\":[$files]}")
done < <(awk -F'\t' '$2 != "-" { print $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 }' "$rows" | sort -u)

joined=$(IFS=,; echo "${components[*]}")
cat > "$share/sbom/$program-debian.cdx.json" <<JSON
{"bomFormat":"CycloneDX","specVersion":"1.6","version":1,"metadata":{"tools":{"components":[{"type":"application","name":"satoken images/debian-packages.sh"}]},"component":{"type":"container","bom-ref":"$program-image-base","name":"$program","description":"the files of the $program image copied from the build machine ($distro); its Java libraries are in $program.cdx.json"}},"components":[$joined]}
JSON
