#!/bin/sh
# Runs before the package's files are unpacked (deb preinst, rpm %pre): the
# vcpnode system user must exist so that /etc/vcpnode can belong to its group.
# The package also ships /usr/lib/sysusers.d/vcpnode.conf, the same user for
# systemd-sysusers.
set -e
if getent passwd vcpnode >/dev/null 2>&1; then
	exit 0
fi
nologin=/usr/sbin/nologin
[ -x "$nologin" ] || nologin=/sbin/nologin
useradd --system --user-group --home-dir /var/lib/vcpnode --no-create-home \
	--shell "$nologin" --comment "vcpnode daemon" vcpnode
