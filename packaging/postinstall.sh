#!/bin/sh
# Runs after the files are in place (deb postinst, rpm %post). Nothing is
# enabled or started on a first install: the node needs a server URL and a
# key first. An upgrade restarts a service that was already running.
set -e
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	if systemctl is-active --quiet vcpnode.service; then
		systemctl try-restart vcpnode.service || true
		exit 0
	fi
fi
if [ ! -e /etc/vcpnode/key ]; then
	cat <<'MSG'
vcpnode is installed but not enabled. To connect it to your VCP server:
  1. set [hub] url in /etc/vcpnode/config.toml
  2. put the server's VCP_Key in /etc/vcpnode/key:
       sudo install -m 600 /dev/null /etc/vcpnode/key && sudoedit /etc/vcpnode/key
  3. sudo vcpnode config check --config /etc/vcpnode/config.toml
  4. sudo systemctl enable --now vcpnode
MSG
fi
