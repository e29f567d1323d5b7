#!/usr/bin/env bash
# Live check of the systemd integration: boots a real systemd (Debian
# bookworm, systemd 252) in a systemd-nspawn container, installs vcpnode
# there fresh with scripts/install.sh and checks what the system service
# promises: start, reload, a refused bad config, no key in any output,
# restart after a crash, a clean stop.
#
# NOT part of CI or `make check`: it needs root, debootstrap and
# systemd-container on the host, downloads a Debian rootfs (~300 MB) the first
# time (minutes), then takes under a minute. Run it by hand after touching
# the unit, the installer or the service code.
#
#   sudo scripts/systemd-live-check.sh [--rootfs DIR] [--mirror URL] [--keep]
#
# Options:
#   --rootfs DIR   the cached base rootfs (default /var/tmp/vcpnode-rootfs);
#                  made with debootstrap when missing, reused when present.
#                  The base is never booted: each run boots a throwaway copy.
#   --mirror URL   Debian mirror for debootstrap (default: the bookworm entry
#                  of apt's sources, else http://deb.debian.org/debian)
#   --keep         keep the throwaway copy and console log (for debugging)
#
# The container has a private network (loopback only); the hub it is pointed
# at, 127.0.0.1:6005, is never listening, so the node stays in backoff.
# Prints PASS/FAIL per check, then "N passed, M failed"; exits 1 on any FAIL.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
rootfs=/var/tmp/vcpnode-rootfs
mirror=""
keep=0
suite=bookworm
machine=vcpnode-check
ct_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
	case "$1" in
	--rootfs) rootfs=${2:?--rootfs needs a directory}; shift 2 ;;
	--mirror) mirror=${2:?--mirror needs a URL}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "systemd-live-check.sh: unknown option $1" >&2; usage 2 >&2 ;;
	esac
done

if [ "$(id -u)" -ne 0 ]; then
	echo "systemd-live-check.sh: must run as root (it runs debootstrap and systemd-nspawn): sudo $0" >&2
	exit 1
fi
for tool in systemd-nspawn nsenter go; do
	if ! command -v "$tool" >/dev/null; then
		echo "systemd-live-check.sh: $tool not found; install systemd-container (and util-linux, go)" >&2
		exit 1
	fi
done

passed=0 failed=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
summary() {
	echo "$passed passed, $failed failed"
	if [ "$failed" -ne 0 ]; then return 1; fi
}
# fatal: a step the rest depends on failed; count it, summarise, stop.
fatal() {
	fail "$1" "$2"
	summary || true
	exit 1
}

# --- cleanup (always) --------------------------------------------------------

work="" nspawn_pid="" ct_pid=""

# wait_gone PID SECONDS: true once PID has exited.
wait_gone() {
	local deadline=$((SECONDS + $2))
	while kill -0 "$1" 2>/dev/null; do
		if [ "$SECONDS" -ge "$deadline" ]; then return 1; fi
		sleep 0.5
	done
}

cleanup() {
	local rc=$?
	set +e
	if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
		if [ -n "$ct_pid" ]; then
			nsenter -t "$ct_pid" -a -- env -i PATH="$ct_path" systemctl poweroff --no-block >/dev/null 2>&1
		fi
		if ! wait_gone "$nspawn_pid" 60; then
			echo "container did not power off in 60s; terminating systemd-nspawn ($nspawn_pid)" >&2
			kill -TERM "$nspawn_pid" 2>/dev/null
			wait_gone "$nspawn_pid" 15 || kill -KILL "$nspawn_pid" 2>/dev/null
		fi
		wait "$nspawn_pid" 2>/dev/null
	fi
	if [ -n "$work" ] && [ -d "$work" ]; then
		if [ "$keep" -eq 1 ]; then
			echo "kept $work"
		elif findmnt -rn -o TARGET | grep -qF "$work"; then
			echo "not removing $work: something is still mounted under it" >&2
		else
			rm -rf --one-file-system "$work"
		fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "interrupted; cleaning up" >&2; exit 130' INT TERM

# --- base rootfs -------------------------------------------------------------

# apt_mirror prints the URI of apt's first enabled "deb" source for $suite
# itself (not -security or -updates), from one-line and deb822 files.
apt_mirror() {
	local f files=()
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		if [ -f "$f" ]; then files+=("$f"); fi
	done
	if [ "${#files[@]}" -eq 0 ]; then return 0; fi
	awk -v suite="$suite" '
		function flush() {
			if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no" && (" " suites " ") ~ (" " suite " ") && uris != "" && found == "") {
				split(uris, u, " "); found = u[1]
			}
			types = ""; uris = ""; suites = ""; enabled = ""
		}
		FNR == 1 { flush() }
		/^[ \t]*#/ { next }
		FILENAME ~ /\.sources$/ {
			if ($0 ~ /^[ \t]*$/) { flush(); next }
			line = $0; key = tolower(line); sub(/:.*/, "", key)
			val = line; sub(/^[^:]*:[ \t]*/, "", val)
			if (key == "types") types = val
			else if (key == "uris") uris = val
			else if (key == "suites") suites = val
			else if (key == "enabled") enabled = val
			next
		}
		$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
			if ($(i + 1) == suite && found == "") found = $i
		}
		END { flush(); if (found != "") print found }
	' "${files[@]}"
}

if [ -e "$rootfs" ]; then
	if [ ! -x "$rootfs/lib/systemd/systemd" ]; then
		echo "systemd-live-check.sh: $rootfs exists but holds no systemd; remove it or pass --rootfs" >&2
		exit 1
	fi
	echo "reusing base rootfs $rootfs"
else
	if ! command -v debootstrap >/dev/null; then
		echo "systemd-live-check.sh: debootstrap not found: apt-get install debootstrap systemd-container" >&2
		exit 1
	fi
	if [ -z "$mirror" ]; then mirror=$(apt_mirror); fi
	mirror=${mirror:-http://deb.debian.org/debian}
	echo "creating base rootfs $rootfs from $mirror ($suite; takes a few minutes)"
	# Into a side directory first, so an interrupted run leaves nothing that
	# a later run would take for a finished rootfs.
	partial="$rootfs.partial"
	rm -rf --one-file-system "$partial"
	debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus "$suite" "$partial" "$mirror" >"$partial.log" 2>&1 ||
		{ tail -n 30 "$partial.log" >&2; fatal "debootstrap" "see $partial.log"; }
	mv "$partial" "$rootfs"
	rm -f "$partial.log"
fi

# --- build, copy, boot -------------------------------------------------------

work=$(mktemp -d "$(dirname "$rootfs")/vcpnode-check.XXXXXX")
mkdir "$work/bin"
echo "building vcpnode"
(cd "$repo" && CGO_ENABLED=0 go build -trimpath -o "$work/bin/vcpnode" ./cmd/vcpnode) ||
	fatal "build" "go build ./cmd/vcpnode failed"
pass "build ./cmd/vcpnode"

# The base stays as debootstrap left it; the copy is booted and thrown away.
cp -a --reflink=auto "$rootfs" "$work/root"

systemd-nspawn -D "$work/root" -M "$machine" --register=no --keep-unit --private-network \
	--bind-ro="$repo:/src" --bind-ro="$work/bin:/opt/vcpnode-bin" -b \
	</dev/null >"$work/console.log" 2>&1 &
nspawn_pid=$!

# PID 1 of the container: the child of systemd-nspawn whose pid in its own
# namespace is 1.
deadline=$((SECONDS + 30))
while [ -z "$ct_pid" ]; do
	for child in $(cat /proc/"$nspawn_pid"/task/*/children 2>/dev/null); do
		nspid=$(awk '$1 == "NSpid:" { print $NF }' "/proc/$child/status" 2>/dev/null || true)
		if [ "$nspid" = 1 ]; then ct_pid=$child; fi
	done
	if [ -n "$ct_pid" ]; then break; fi
	if ! kill -0 "$nspawn_pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
		tail -n 30 "$work/console.log" >&2
		fatal "container started" "no container PID 1 under systemd-nspawn ($nspawn_pid)"
	fi
	sleep 0.2
done

# ct CMD...: run CMD inside the container with a clean environment.
ct() { nsenter -t "$ct_pid" -a -- env -i PATH="$ct_path" LANG=C.UTF-8 SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"; }

deadline=$((SECONDS + 120))
state=""
while :; do
	state=$(ct systemctl is-system-running 2>/dev/null || true)
	case "$state" in running | degraded) break ;; esac
	if ! kill -0 "$nspawn_pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
		tail -n 30 "$work/console.log" >&2
		fatal "container booted" "systemctl is-system-running says '${state:-nothing}' after 120s"
	fi
	sleep 0.5
done
pass "container booted (systemd $(ct systemctl --version | awk 'NR == 1 { print $2 }'), system $state)"

# --- fresh install -----------------------------------------------------------

# A base rootfs reused from an earlier hand-run may hold an install: remove it
# with the new binary's own uninstall, then the user it leaves by design.
if ct test -e /usr/local/bin/vcpnode -o -e /etc/systemd/system/vcpnode.service -o -e /etc/vcpnode; then
	echo "base rootfs holds an earlier install; removing it"
	ct /opt/vcpnode-bin/vcpnode service uninstall --system --purge >"$work/uninstall.log" 2>&1 ||
		{ cat "$work/uninstall.log" >&2; fatal "remove earlier install" "vcpnode service uninstall --purge failed"; }
	ct rm -f /usr/local/bin/vcpnode /etc/sysusers.d/vcpnode.conf
	if ct getent passwd vcpnode >/dev/null; then ct userdel vcpnode; fi
fi
if ct test -e /usr/local/bin/vcpnode -o -e /etc/systemd/system/vcpnode.service -o -e /etc/vcpnode -o -e /var/lib/vcpnode ||
	ct getent passwd vcpnode >/dev/null; then
	fatal "clean slate" "a vcpnode binary, unit, config, state directory or user is left"
fi
pass "clean slate: no vcpnode binary, unit, config, state or user"
# Journal entries from here on are the fresh install's.
cursor=$(ct journalctl -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p')
[ -n "$cursor" ] || fatal "journal cursor" "journalctl --show-cursor printed none"

# A random, URL-path-safe key that no other output can contain by chance.
key="livecheck$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

if ct /src/scripts/install.sh --binary /opt/vcpnode-bin/vcpnode >"$work/install1.log" 2>&1; then
	pass "install.sh (first run, no config yet)"
else
	cat "$work/install1.log" >&2
	fatal "install.sh (first run)" "failed"
fi

if printf '%s\n' "$key" | ct /usr/local/bin/vcpnode init --config /etc/vcpnode/config.toml \
	--hub http://127.0.0.1:6005 --name live-check --key-stdin --force >"$work/init.log" 2>&1; then
	pass "vcpnode init --key-stdin"
else
	cat "$work/init.log" >&2
	fatal "vcpnode init" "failed"
fi

if ct /src/scripts/install.sh --binary /opt/vcpnode-bin/vcpnode >"$work/install2.log" 2>&1; then
	pass "install.sh (second run, restarts with the key)"
else
	cat "$work/install2.log" >&2
	fatal "install.sh (second run)" "failed"
fi

# --- the running service -----------------------------------------------------

show() { ct systemctl show -p "$1" --value vcpnode; }

# wait_journal TEXT SECONDS: true once a vcpnode entry of the fresh install
# holds TEXT (journald takes the unit's output asynchronously).
wait_journal() {
	local deadline=$((SECONDS + $2))
	until ct journalctl -u vcpnode --after-cursor="$cursor" --no-pager -o cat | grep -qF -- "$1"; do
		if [ "$SECONDS" -ge "$deadline" ]; then return 1; fi
		sleep 0.5
	done
}

# wait_active SECONDS: true once the unit is active.
wait_active() {
	local deadline=$((SECONDS + $1))
	until [ "$(ct systemctl is-active vcpnode || true)" = active ]; do
		if [ "$SECONDS" -ge "$deadline" ]; then return 1; fi
		sleep 0.5
	done
}

if wait_active 30; then
	pass "systemctl is-active vcpnode = active"
else
	fatal "systemctl is-active vcpnode" "$(ct systemctl is-active vcpnode || true) after 30s"
fi

if ct systemctl reload vcpnode; then pass "systemctl reload vcpnode (valid config)"; else fail "systemctl reload vcpnode (valid config)" "exit status $?"; fi

status_out=$(ct /usr/local/bin/vcpnode status 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 0 ] && grep -q REDACTED <<<"$status_out"; then
	pass "vcpnode status (exit 0, hub key shown as REDACTED)"
else
	fail "vcpnode status" "exit $rc; output: $status_out"
fi

cfg=/etc/vcpnode/config.toml
ct cp -p "$cfg" "$cfg.live-check"
ct sh -c 'printf "\nlive_check_unknown_key = 1\n" >>"$1"' sh "$cfg"
reload_out=$(ct systemctl reload vcpnode 2>&1) && rc=0 || rc=$?
if [ "$rc" -ne 0 ]; then pass "systemctl reload refuses a config with an unknown key (exit $rc)"; else fail "systemctl reload refuses a bad config" "exit 0: $reload_out"; fi
if [ "$(ct systemctl is-active vcpnode || true)" = active ]; then
	pass "service still active after the refused reload"
else
	fail "service still active after the refused reload" "$(ct systemctl is-active vcpnode || true)"
fi
ct mv -f "$cfg.live-check" "$cfg"
if ct systemctl reload vcpnode; then pass "systemctl reload after restoring the config"; else fail "systemctl reload after restoring the config" "exit status $?"; fi
if wait_journal live_check_unknown_key 10; then
	pass "the refused reload is explained in the journal"
else
	fail "the refused reload is explained in the journal" "no line names live_check_unknown_key after 10s"
fi

# --- the key stays secret ----------------------------------------------------

# Count the key in each output; the key file itself proves the search works.
count_key() { { grep -oF -- "$key" || true; } | wc -l | tr -d ' '; }
n=$(ct cat /etc/vcpnode/key | count_key)
if [ "$n" -eq 1 ]; then pass "key file holds the key (the search below can find it)"; else fail "key file holds the key" "found $n times"; fi

# The dial attempts are where a key in the hub URL would show.
if wait_journal 127.0.0.1:6005 10; then
	pass "journal holds the node's attempts to reach the hub (127.0.0.1:6005)"
else
	fail "journal holds the node's attempts to reach the hub" "no entry names 127.0.0.1:6005 after 10s"
fi
journal=$(ct journalctl -u vcpnode -o json --no-pager)
for what in "journalctl -u vcpnode -o json" "systemctl status vcpnode" "vcpnode status" "vcpnode status --json"; do
	case "$what" in
	journalctl*) out=$journal ;;
	systemctl*) out=$(ct systemctl status --no-pager -l -n 200 vcpnode 2>&1 || true) ;;
	"vcpnode status") out=$status_out ;;
	*) out=$(ct /usr/local/bin/vcpnode status --json 2>&1 || true) ;;
	esac
	n=$(count_key <<<"$out")
	if [ "$n" -eq 0 ]; then pass "key appears 0 times in $what"; else fail "key appears in $what" "$n times"; fi
done

# --- crash and stop ----------------------------------------------------------

old_pid=$(show MainPID)
old_restarts=$(show NRestarts)
if [ "${old_pid:-0}" -gt 0 ]; then
	ct sh -c 'kill -KILL "$1"' sh "$old_pid"
	deadline=$((SECONDS + 30))
	restarted=0
	while [ "$SECONDS" -lt "$deadline" ]; do
		pid=$(show MainPID) restarts=$(show NRestarts) active=$(show ActiveState)
		if [ "$restarts" -gt "$old_restarts" ] && [ "$active" = active ] && [ "$pid" -gt 0 ] && [ "$pid" != "$old_pid" ]; then
			restarted=1
			break
		fi
		sleep 0.5
	done
	if [ "$restarted" -eq 1 ]; then
		pass "kill -KILL of the main PID: restarted (NRestarts $old_restarts -> $restarts, pid $old_pid -> $pid)"
	else
		fail "restart after kill -KILL" "after 30s: NRestarts $(show NRestarts), ActiveState $(show ActiveState), MainPID $(show MainPID)"
	fi
else
	fail "restart after kill -KILL" "no main PID to kill"
fi

if ct systemctl stop vcpnode; then pass "systemctl stop vcpnode"; else fail "systemctl stop vcpnode" "exit status $?"; fi
result=$(show Result) active=$(show ActiveState)
if [ "$result" = success ] && [ "$active" = inactive ]; then
	pass "stopped cleanly (Result=success, ActiveState=inactive)"
else
	fail "stopped cleanly" "Result=$result ActiveState=$active"
fi

summary
