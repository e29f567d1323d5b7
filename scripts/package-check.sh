#!/usr/bin/env bash
# Check the release configuration and the .deb package, as CI does:
#   1. goreleaser check (.goreleaser.yaml is valid);
#   2. a snapshot .deb for linux/amd64 only, built by GoReleaser from the same
#      configuration as a release;
#   3. its contents, conffiles and maintainer scripts, a static binary;
#   4. dpkg -i inside a throwaway root (a chroot holding dpkg and what the
#      maintainer scripts need), then purge: the vcpnode user is created there
#      (not on the host), the config is installed 0640 root:vcpnode and kept
#      when edited, nothing is enabled.
# Needs dpkg and root (chroot); prints "N passed, M failed" and exits 1 on a failure.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/goreleaser.sh
. "$root/scripts/goreleaser.sh"
cd "$root"

pass=0 fail=0
check() { # check NAME COMMAND...
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then
		echo "PASS $name"
		pass=$((pass + 1))
	else
		echo "FAIL $name"
		fail=$((fail + 1))
	fi
}

work=$(mktemp -d)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT

goreleaser check

# The same configuration, with the build narrowed to linux/amd64 and dist/ in
# the temporary directory.
awk -v dist="$work/dist" '
	NR == 1 { print "dist: " dist }
	/^    targets:$/ { print; print "      - linux_amd64_v1"; skip = 1; next }
	skip && /^      - / { next }
	{ skip = 0; print }
' .goreleaser.yaml >"$work/goreleaser.yaml"
goreleaser release --snapshot --clean --skip=archive -f "$work/goreleaser.yaml"

deb=$(find "$work/dist" -name 'vcpnode_*_amd64.deb' | head -n 1)
if [ -z "$deb" ]; then
	echo "FAIL no .deb was built"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "built $(basename "$deb")"

contents=$(dpkg-deb -c "$deb")
has() { grep -q -- "$1" <<<"$contents"; }
check "binary in /usr/bin" has ' ./usr/bin/vcpnode$'
check "system unit" has ' ./usr/lib/systemd/system/vcpnode.service$'
check "sysusers entry" has ' ./usr/lib/sysusers.d/vcpnode.conf$'
check "config 0640 root/vcpnode" grep -q -- '^-rw-r----- root/vcpnode .* ./etc/vcpnode/config.toml$' <<<"$contents"
check "man page vcpnode(1)" has ' ./usr/share/man/man1/vcpnode.1$'
check "man page vcpnode-service-install(1)" has ' ./usr/share/man/man1/vcpnode-service-install.1$'
check "bash completion" has ' ./usr/share/bash-completion/completions/vcpnode$'
check "zsh completion" has ' ./usr/share/zsh/vendor-completions/_vcpnode$'
check "fish completion" has ' ./usr/share/fish/vendor_completions.d/vcpnode.fish$'
check "docs" has ' ./usr/share/doc/vcpnode/docs/configuration.md$'
check "config is a conffile" grep -qx /etc/vcpnode/config.toml <(dpkg-deb -I "$deb" conffiles)
for script in preinst postinst prerm; do
	check "maintainer script $script" dpkg-deb -I "$deb" "$script"
done
check "postinst enables nothing" bash -c '! dpkg-deb -I "$1" postinst | grep -Eq "^[[:space:]]*systemctl (enable|start)"' _ "$deb"

dpkg-deb -x "$deb" "$work/x"
check "binary is static" bash -c 'file "$1" | grep -q "statically linked"' _ "$work/x/usr/bin/vcpnode"
check "binary runs" "$work/x/usr/bin/vcpnode" version
check "man page is roff" grep -q '^\.TH "VCPNODE" "1"' "$work/x/usr/share/man/man1/vcpnode.1"
check "bash completion completes vcpnode" grep -q '__start_vcpnode' "$work/x/usr/share/bash-completion/completions/vcpnode"
check "unit runs /usr/bin/vcpnode" grep -q '^ExecStart=/usr/bin/vcpnode run --config /etc/vcpnode/config.toml$' "$work/x/usr/lib/systemd/system/vcpnode.service"
# A [control] group other than vcpnode must get through /run/vcpnode to the
# socket (0660 of that group); 0750 of vcpnode would keep its members out.
check "unit: /run/vcpnode searchable by a [control] group" grep -q '^RuntimeDirectoryMode=0755$' "$work/x/usr/lib/systemd/system/vcpnode.service"

# A throwaway root: dpkg, the programs the maintainer scripts call, their
# libraries, copies of the account files and an empty dpkg database. dpkg runs
# inside it (chroot), so user and group names resolve there, as on a real system.
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP dpkg -i into a throwaway root: needs root (chroot)"
else
	r=$work/root
	cp /etc/passwd "$work/passwd.before"
	# The merged-/usr layout: /bin/sh and /lib64/ld-linux… resolve under /usr.
	mkdir -p "$r"/{etc/dpkg,dev,tmp,var/log,var/lib/dpkg/{info,updates,triggers},usr/{bin,sbin,lib,lib64}}
	for d in bin sbin lib lib64; do ln -s "usr/$d" "$r/$d"; done
	mknod -m 666 "$r/dev/null" c 1 3
	: >"$r/var/lib/dpkg/status"
	: >"$r/var/lib/dpkg/available"
	cp /etc/passwd /etc/group /etc/shadow /etc/gshadow /etc/login.defs /etc/nsswitch.conf "$r/etc/" 2>/dev/null || true
	for prog in sh dash cat getent useradd rm mv ls find diff tar \
		dpkg dpkg-deb dpkg-split dpkg-query dpkg-divert; do
		p=$(command -v "$prog") || continue
		cp -L "$p" "$r$p"
		ldd "$p" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
			mkdir -p "$r$(dirname "$lib")"
			cp -Ln "$lib" "$r$lib"
		done
	done
	# dpkg wants these on PATH; the maintainer scripts never run them.
	for prog in ldconfig start-stop-daemon; do
		printf '#!/bin/sh\nexit 0\n' >"$r/usr/sbin/$prog"
		chmod 755 "$r/usr/sbin/$prog"
	done
	cp "$deb" "$r/tmp/vcpnode.deb"
	in_root() { PATH=/usr/sbin:/usr/bin chroot "$r" "$@"; }

	check "dpkg -i in the throwaway root" in_root dpkg -i /tmp/vcpnode.deb
	check "package installed" bash -c 'PATH=/usr/sbin:/usr/bin chroot "$1" dpkg -s vcpnode | grep -q "^Status: install ok installed"' _ "$r"
	check "vcpnode user created" grep -q '^vcpnode:' "$r/etc/passwd"
	check "the host's accounts untouched" cmp -s /etc/passwd "$work/passwd.before"
	gid=$(awk -F: '$1 == "vcpnode" { print $3 }' "$r/etc/group")
	check "config 0640, group vcpnode" bash -c '[ "$(stat -c %g:%a "$1")" = "$2:640" ]' _ "$r/etc/vcpnode/config.toml" "$gid"
	check "/etc/vcpnode 0750, group vcpnode" bash -c '[ "$(stat -c %g:%a "$1")" = "$2:750" ]' _ "$r/etc/vcpnode" "$gid"
	check "nothing enabled" bash -c '! find "$1/etc/systemd" -name "vcpnode*" 2>/dev/null | grep -q .' _ "$r"
	echo "# edited" >>"$r/etc/vcpnode/config.toml"
	check "reinstall keeps the edited config" bash -c 'PATH=/usr/sbin:/usr/bin chroot "$1" dpkg -i /tmp/vcpnode.deb && grep -q "^# edited" "$1/etc/vcpnode/config.toml"' _ "$r"
	check "dpkg --purge" in_root dpkg --purge vcpnode
	check "files removed" bash -c '[ ! -e "$1/usr/bin/vcpnode" ] && [ ! -e "$1/etc/vcpnode/config.toml" ]' _ "$r"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
