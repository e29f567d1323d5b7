#!/bin/sh
# Measures vcpnode's idle resident memory (Linux: reads /proc/<pid>/status).
#
#   1. The node package with 50 in-process tools registered, in a process of
#      its own (the fake hub runs in the parent), after GC + FreeOSMemory and
#      a few seconds idle.
#   2. The release binary (built as below), connected with its own tools,
#      after a few seconds idle, without a forced GC; its size on disk too.
#
# Usage: scripts/measure-rss.sh [tool count]   (default 50)
set -eu
cd "$(dirname "$0")/.."

tools="${1:-50}"
bin="${TMPDIR:-/tmp}/vcpnode-rss.$$"
trap 'rm -f "$bin"' EXIT

echo "== node package, $tools tools"
go run ./tools/rsscheck -tools "$tools"

echo
echo "== release binary"
go build -trimpath -ldflags='-s -w' -o "$bin" ./cmd/vcpnode
go run ./tools/rsscheck -binary "$bin"
