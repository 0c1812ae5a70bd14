#!/usr/bin/env bash
# Merges single-architecture OCI archives (Jib's buildTar, one per architecture) into one archive whose image
# is a multi-platform image index, so that one name serves every architecture:
#
#   oci-index.sh OUT REFERENCE ARCHIVE...
#
#   OUT        the archive to write (tar, OCI image layout)
#   REFERENCE  the image's full name, e.g. ghcr.io/satoken/satoken-agent:0.1.0-SNAPSHOT
#   ARCHIVE    an OCI archive holding one single-platform image; its platform is read from its config
#
# The layout of OUT, in three steps:
#   1. blobs/sha256/ holds every blob of every ARCHIVE. Blobs are named by their digest, so a layer two
#      architectures share (the program's jars and classes) is stored once.
#   2. An image index blob lists each ARCHIVE's manifest with its platform (os, architecture), taken from
#      that manifest's config.
#   3. index.json holds one descriptor, of that image index, with the image's name. It must be one: containerd
#      (ctr images import) names an image after each descriptor of index.json, so two manifests under one
#      name would leave the name on the last one, whatever the node's architecture. With the index nested, the
#      name points at the index and the runtime picks its own platform's manifest.
# The archive's entries are sorted, owned by 0:0 and dated 1970, so equal inputs give an equal archive.
# Needs jq, sha256sum and GNU tar.
set -euo pipefail

out=$1 reference=$2
shift 2
if ! command -v jq >/dev/null 2>&1; then
  echo "oci-index.sh: jq not found (Debian: apt-get install jq)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
layout=$work/layout
mkdir -p "$layout/blobs/sha256"

blob() { echo "$layout/blobs/sha256/${1#sha256:}"; }

# 1. and 2.: every blob, and each archive's manifest descriptor with its platform
descriptors=()
for archive in "$@"; do
  unpacked=$work/$(basename "$archive")
  mkdir -p "$unpacked"
  tar -xf "$archive" -C "$unpacked"
  cp -n "$unpacked"/blobs/sha256/* "$layout/blobs/sha256/"
  count=$(jq '.manifests | length' "$unpacked/index.json")
  if [ "$count" != 1 ]; then
    echo "oci-index.sh: $archive: expected one image in index.json, found $count" >&2
    exit 2
  fi
  manifest=$(jq -c '.manifests[0]' "$unpacked/index.json")
  config=$(jq -r '.config.digest' "$(blob "$(jq -r .digest <<< "$manifest")")")
  platform=$(jq -c '{architecture, os} + (if .variant then {variant} else {} end)' "$(blob "$config")")
  descriptors+=("$(jq -c --argjson platform "$platform" \
    '{mediaType, digest, size, platform: $platform}' <<< "$manifest")")
done

image_index=$work/image-index.json
printf '%s\n' "${descriptors[@]}" | jq -cs \
  '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: .}' | tr -d '\n' \
  > "$image_index"
digest=sha256:$(sha256sum "$image_index" | cut -d' ' -f1)
size=$(stat -c %s "$image_index")
cp "$image_index" "$(blob "$digest")"

# 3. the one entry of index.json
jq -cn --arg digest "$digest" --argjson size "$size" --arg name "$reference" '{
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.index.v1+json",
  manifests: [{
    mediaType: "application/vnd.oci.image.index.v1+json", digest: $digest, size: $size,
    annotations: {"org.opencontainers.image.ref.name": $name, "io.containerd.image.name": $name}
  }]
}' | tr -d '\n' > "$layout/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' > "$layout/oci-layout"

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$out.new" -C "$layout" \
  oci-layout index.json blobs
mv "$out.new" "$out"
