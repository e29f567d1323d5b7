# shellcheck shell=bash
# Sourced by release.sh and package-check.sh: a goreleaser function running
# GoReleaser $GORELEASER_VERSION, installed on first use through the Go module
# proxy (never added to go.mod) into the user's cache, so that fresh clones
# (CI's) reuse it: compiling it takes minutes.
GORELEASER_VERSION=${GORELEASER_VERSION:-v2.15.1}
goreleaser_bin=${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}/vcpnode/tools/goreleaser-$GORELEASER_VERSION

goreleaser() {
	if [ ! -x "$goreleaser_bin" ]; then
		echo "installing goreleaser $GORELEASER_VERSION into $(dirname "$goreleaser_bin") (first use only)" >&2
		local tmp
		tmp=$(mktemp -d)
		GOBIN=$tmp go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
		mkdir -p "$(dirname "$goreleaser_bin")"
		mv "$tmp/goreleaser" "$goreleaser_bin"
		rm -rf "$tmp"
	fi
	"$goreleaser_bin" "$@"
}
