#!/usr/bin/env bash
# Install vcpnode and run it as a service (systemd on Linux, launchd on macOS).
#
#   scripts/install.sh                      as root: system service, /usr/local/bin
#   scripts/install.sh                      as a user: user service, ~/.local/bin
#   make build && sudo scripts/install.sh --binary bin/vcpnode
#
# Options:
#   --binary FILE   install this vcpnode instead of building one (make build)
#   --prefix DIR    install to DIR/bin (default /usr/local as root, else ~/.local)
#   --user | --system   the kind of service (default: --system as root)
#   --no-service    only install the binary
#   --dry-run       print what would be done; change nothing
#
# Safe to run again: an unchanged binary is left in place, the service unit is
# rewritten and the service restarted; an existing config is never touched.
# Without systemd (Linux) only the binary is installed, and it says how to run it.
# Set the hub and key first (or after) with: vcpnode init --hub URL --name NAME
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
binary="" prefix="" scope="" service=1 dry_run=""

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
	case "$1" in
	--binary) binary=${2:?--binary needs a file}; shift 2 ;;
	--prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
	--user | --system) scope=$1; shift ;;
	--no-service) service=0; shift ;;
	--dry-run) dry_run=--dry-run; shift ;;
	-h | --help) usage 0 ;;
	*) echo "install.sh: unknown option $1" >&2; usage 2 >&2 ;;
	esac
done

if [ -z "$scope" ]; then
	if [ "$(id -u)" -eq 0 ]; then scope=--system; else scope=--user; fi
fi
if [ -z "$prefix" ]; then
	if [ "$scope" = --system ]; then prefix=/usr/local; else prefix=${HOME:?HOME is not set}/.local; fi
fi

if [ -z "$binary" ]; then
	if ! command -v go >/dev/null || ! command -v make >/dev/null; then
		echo "install.sh: building needs go and make on PATH (sudo resets PATH): run make build, then sudo $0 --binary bin/vcpnode" >&2
		exit 1
	fi
	make -C "$root" build
	binary=$root/bin/vcpnode
fi
if [ ! -x "$binary" ]; then
	echo "install.sh: $binary is not an executable file" >&2
	exit 1
fi

dest=$prefix/bin/vcpnode
run() {
	echo "+ $*"
	if [ -z "$dry_run" ]; then "$@"; fi
}

if [ -f "$dest" ] && cmp -s "$binary" "$dest"; then
	echo "$dest is up to date"
else
	run install -d -m 0755 "$prefix/bin"
	# Copy beside it, then rename: a running service keeps its old file.
	run install -m 0755 "$binary" "$dest.new"
	run mv -f "$dest.new" "$dest"
fi

# Where a shell finds it: say exactly what to add when the directory is not
# on PATH (~/.local/bin often is not).
case ":$PATH:" in
*":$prefix/bin:"*) ;;
*)
	echo "note: $prefix/bin is not on your PATH; add it, e.g. in ~/.profile:"
	echo "  export PATH=\"$prefix/bin:\$PATH\""
	;;
esac

if [ "$service" -eq 0 ]; then
	exit 0
fi
# Without a service manager the binary is what could be installed: say how
# to run it instead of failing after the job is done.
if [ "$(uname -s)" = Linux ] && [ ! -d /run/systemd/system ]; then
	echo "no service installed: systemd is not the init system here (a container, WSL without systemd, OpenRC, runit)."
	echo "Run $dest run under the supervisor this machine has: docs/service.md, \"Without systemd\", has the recipes."
	exit 0
fi
# In a dry run the new binary is not in place yet: ask the one given, which
# prints what it would do.
installer=$dest
if [ -n "$dry_run" ]; then installer=$binary; fi
echo "+ $installer service install $scope --binary $dest $dry_run"
"$installer" service install "$scope" --binary "$dest" $dry_run
