#!/bin/sh
# Runs before the files are removed (deb prerm, rpm %preun). Stops the service
# on removal, not on upgrade (deb: "upgrade"; rpm: $1 is 1 on upgrade).
set -e
case "$1" in
upgrade | 1) exit 0 ;;
esac
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl disable --now vcpnode.service >/dev/null 2>&1 || true
fi
