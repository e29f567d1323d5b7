#!/usr/bin/env bash
# Build, vet and test the way CI does. Usage: scripts/check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
go build -trimpath -ldflags "-s -w -X main.version=${version}" -o bin/vcpnode ./cmd/vcpnode
echo "built bin/vcpnode (${version})"

unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...
go test -race ./...
