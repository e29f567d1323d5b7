#!/bin/sh
# Measures vcpnode side by side with the official Node.js node
# (lioensky/VCPDistributedServer): both connect to one VCP server, host the
# same plugins, serve the same files, and are timed in interleaved rounds
# (go run ./tools/benchofficial -h for the options). A measurement, not a
# test: nothing in CI runs it. Linux only; docs/performance.md says how to
# get the checkouts and shows a run's table.
#
# Usage: scripts/bench-vs-official.sh OFFICIAL_CHECKOUT [VCPTOOLBOX_CHECKOUT] [-- FLAGS]
#   OFFICIAL_CHECKOUT    git clone of VCPDistributedServer, with npm install done
#   VCPTOOLBOX_CHECKOUT  git clone of VCPToolBox: the server is its own
#                        WebSocketServer.js (no npm install needed); without
#                        it, a minimal server speaking the same protocol
#   FLAGS                e.g. -rounds 7, -quick, -keep
#
# Run as root, it runs in a network namespace of its own where only loopback
# exists (the official node asks api.ipify.org for its address at connect).
set -eu
cd "$(dirname "$0")/.."

[ $# -ge 1 ] || { sed -n '2,18p' "$0"; exit 2; }
official=$1
shift
toolbox=""
if [ $# -ge 1 ] && [ "$1" != "--" ]; then
	toolbox=$1
	shift
fi
[ "${1:-}" = "--" ] && shift

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$tmp/vcpnode" ./cmd/vcpnode
go build -o "$tmp/benchofficial" ./tools/benchofficial
set -- "$tmp/benchofficial" -official "$official" -toolbox "$toolbox" -vcpnode "$tmp/vcpnode" "$@"

if [ "$(id -u)" = 0 ] && unshare --net true 2>/dev/null; then
	unshare --net sh -c 'ip link set lo up && exec "$@"' sh "$@"
else
	echo "bench-vs-official: not root or no unshare: running in this network namespace" >&2
	"$@"
fi
