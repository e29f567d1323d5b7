#!/usr/bin/env bash
# Build vcpnode's release artefacts into dist/ with GoReleaser: archives for
# linux, darwin and windows on amd64 and arm64, SHA-256 checksums, and .deb and
# .rpm packages (see .goreleaser.yaml).
#
#   scripts/release.sh            a snapshot of HEAD (version 0.0.1-snapshot+COMMIT)
#   scripts/release.sh --tag      the release of the tag at HEAD (vX.Y.Z)
#   scripts/release.sh --check    only check .goreleaser.yaml
#
# GoReleaser is fetched through the Go module proxy at a pinned version into
# bin/tools (never added to go.mod); the first run compiles it (minutes).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/goreleaser.sh
. "$root/scripts/goreleaser.sh"

mode=snapshot
case "${1:-}" in
"") ;;
--tag) mode=tag ;;
--check) mode=check ;;
-h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "release.sh: unknown option $1" >&2; exit 2 ;;
esac

cd "$root"
goreleaser check
case $mode in
check) ;;
snapshot) goreleaser release --snapshot --clean ;;
tag) goreleaser release --clean ;;
esac
