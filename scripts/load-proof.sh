#!/usr/bin/env bash
# The suite's load proof (issue 10): `go test -count=1 -race ./...` passes
# twice in a row while a second copy of the suite runs at the same time and a
# `vcpnode run` owns the system paths /run/vcpnode and /var/lib/vcpnode.
#
# Needs root (a private mount namespace). The machine's /run and /var/lib are
# never written: inside the namespace they are overlays whose writes go to a
# tmpfs that disappears with the namespace.
#
#   sudo scripts/load-proof.sh            # both copies run the suite twice
#   RUNS=1 sudo scripts/load-proof.sh     # once each
set -euo pipefail
shopt -s nullglob

if [ "${1:-}" != --inside ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "load-proof: needs root for its private mount namespace" >&2
		exit 2
	fi
	command -v unshare >/dev/null || { echo "load-proof: needs unshare (util-linux)" >&2; exit 2; }
	exec unshare --mount --propagation private "$0" --inside
fi

repo=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-2}
logs=$(mktemp -d /tmp/vcpnode-load-proof-logs.XXXXXX)
work=$(mktemp -d /tmp/vcpnode-load-proof.XXXXXX)
mount -t tmpfs -o size=2g tmpfs "$work"

# /run and /var/lib as overlays: everything stays readable, writes stay here.
for dir in /run /var/lib; do
	ov="$work/overlay${dir//\//_}"
	mkdir -p "$ov/upper" "$ov/work"
	mount -t overlay overlay -o "lowerdir=$dir,upperdir=$ov/upper,workdir=$ov/work" "$dir"
done

echo "== building vcpnode and cloning two copies of $(git -C "$repo" rev-parse --short HEAD)"
(cd "$repo" && CGO_ENABLED=0 go build -o "$work/vcpnode" ./cmd/vcpnode)
git clone -q "$repo" "$work/a"
git clone -q "$repo" "$work/b"

# The daemon that owns the system paths: root's default control socket
# (/run/vcpnode) and plugin state (/var/lib/vcpnode). Its hub is a closed
# loopback port, so it keeps reconnecting for the whole proof.
mkdir -p "$work/daemon"
head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$work/daemon/key"
chmod 600 "$work/daemon/key"
cat >"$work/daemon/config.toml" <<EOF
[hub]
url = "ws://127.0.0.1:9"
key_file = "$work/daemon/key"

[plugins]
dirs = ["$repo/examples/Plugin"]
EOF
"$work/vcpnode" run --config "$work/daemon/config.toml" >"$logs/daemon.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null || true; wait $daemon 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	[ -S /run/vcpnode/vcpnode.sock ] && break
	kill -0 $daemon 2>/dev/null || { cat "$logs/daemon.log"; echo "load-proof: the daemon died" >&2; exit 1; }
	sleep 0.1
done
"$work/vcpnode" status --config "$work/daemon/config.toml" | head -3
[ -e /var/lib/vcpnode ] || { echo "load-proof: the daemon did not take /var/lib/vcpnode" >&2; exit 1; }

suite() { # copy, run number
	local start=$SECONDS rc=0
	(cd "$work/$1" && go test -count=1 -race ./... >"$logs/$1.$2.log" 2>&1) || rc=$?
	echo "$1 run $2: exit $rc after $((SECONDS - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
	return $rc
}

echo "== $runs run(s) in each copy, both copies at once"
(for i in $(seq "$runs"); do suite b "$i" || true; done) &
second=$!
failed=0
for i in $(seq "$runs"); do
	suite a "$i" || failed=1
done
wait $second
cat /dev/null "$logs"/[ab].*.log | grep -h -E '^(--- FAIL|FAIL|panic:)' || true
if ! kill -0 $daemon 2>/dev/null; then
	echo "load-proof: the daemon owning /run/vcpnode died during the proof" >&2
	failed=1
fi
for f in "$logs"/b.*.log; do grep -q '^FAIL' "$f" && failed=1; done
[ $failed -eq 0 ] && echo "load-proof: passed" || echo "load-proof: FAILED"
echo "logs: $logs"
exit $failed
