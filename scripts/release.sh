#!/usr/bin/env bash
# Release build of dsh-acp: cross-builds static binaries (CGO_ENABLED=0)
# for linux, darwin and windows on amd64 and arm64, packs each with the
# README into a versioned archive (dsh-acp_VERSION_GOOS_GOARCH.tar.gz,
# .zip for windows), writes their sha256 sums, and regenerates the ACP
# registry entry packaging/registry/agent.json for VERSION. The archives
# also hold LICENSE; `releasetool verify DIR VERSION` checks the result.
#
#   scripts/release.sh [--out DIR] [--targets "GOOS/GOARCH ..."] [--no-registry] [vVERSION]
#
# VERSION (a tag vX.Y.Z, or X.Y.Z) must be the release cmd/dsh-acp
# prepares (its `version = "X.Y.Z-dev"`); it defaults to that one. The
# binaries print it with --version (-ldflags -X main.version=X.Y.Z).
# Nothing is downloaded beyond the Go modules already in go.sum: the
# script runs offline with a filled module cache. Archives are
# reproducible: -trimpath, no build id, entries sorted and dated by
# SOURCE_DATE_EPOCH (default: the last commit's time).
set -euo pipefail
cd "$(dirname "$0")/.."

out=dist
only=""
registry=1
tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --targets) only=$2; shift 2 ;;
    --no-registry) registry=0; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "release.sh: unknown flag $1" >&2; exit 2 ;;
    *) tag=$1; shift ;;
  esac
done

stem=$(sed -n 's/^var version = "\([0-9]*\.[0-9]*\.[0-9]*\)-dev"$/\1/p' cmd/dsh-acp/config.go)
if [ -z "$stem" ]; then
  echo 'release.sh: cannot read `var version = "X.Y.Z-dev"` in cmd/dsh-acp/config.go' >&2
  exit 2
fi
version=${tag#v}
version=${version:-$stem}
if [ "$version" != "$stem" ]; then
  echo "release.sh: v$version is not the release this tree prepares ($stem, from version = \"$stem-dev\" in cmd/dsh-acp/config.go); change that first" >&2
  exit 2
fi

epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/releasetool" ./packaging/cmd/releasetool
tool="$work/releasetool"
hostos=$(go env GOHOSTOS)
hostarch=$(go env GOHOSTARCH)

archives=()
start_all=$(date +%s)
while read -r goos goarch exe archive; do
  if [ -n "$only" ] && ! [[ " $only " == *" $goos/$goarch "* ]]; then
    continue
  fi
  stage="$work/$goos-$goarch"
  mkdir -p "$stage"
  start=$(date +%s)
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false \
    -ldflags "-s -w -buildid= -X main.version=$version" -o "$stage/$exe" ./cmd/dsh-acp
  if [ "$goos/$goarch" = "$hostos/$hostarch" ]; then
    got=$("$stage/$exe" --version | sed -n 1p)
    if [ "$got" != "dsh-acp $version" ]; then
      echo "release.sh: $exe --version printed \"$got\", want \"dsh-acp $version\"" >&2
      exit 1
    fi
  fi
  "$tool" archive "$out/$archive" "$epoch" "$stage/$exe" README.md LICENSE
  archives+=("$out/$archive")
  echo "built $archive in $(( $(date +%s) - start )) s"
done < <("$tool" targets "$version")

if [ ${#archives[@]} -eq 0 ]; then
  echo "release.sh: no target matches --targets \"$only\"" >&2
  exit 2
fi
sums="$out/$("$tool" checksums-name "$version")"
"$tool" checksums "$sums" "${archives[@]}"
if [ "$registry" = 1 ]; then
  "$tool" agent-json "$version" > packaging/registry/agent.json
  cp packaging/registry/agent.json packaging/registry/icon.svg "$out/"
fi
echo "release $version: ${#archives[@]} archives, $(basename "$sums") in $out ($(( $(date +%s) - start_all )) s)"
