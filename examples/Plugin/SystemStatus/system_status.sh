#!/bin/sh
# SystemStatus: a static VCP plugin. Whatever it prints on stdout becomes the
# value of {{VCPNodeSystemStatus}}. It reads no stdin and takes no arguments.
# Only POSIX tools; every line is optional, so a missing tool never fails it.
set -u

echo "Host: $(uname -n) ($(uname -s) $(uname -m))"
if [ -r /proc/uptime ]; then
	secs=$(cut -d' ' -f1 /proc/uptime | cut -d. -f1)
	echo "Up: $((secs / 86400))d $((secs % 86400 / 3600))h $((secs % 3600 / 60))m"
fi
if [ -r /proc/loadavg ]; then
	echo "Load (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
fi
if [ -r /proc/meminfo ]; then
	awk '/^MemTotal:/ {t=$2} /^MemAvailable:/ {a=$2}
	     END { if (t) printf "Memory: %.1f GiB available of %.1f GiB\n", a/1048576, t/1048576 }' /proc/meminfo
fi
df -P / 2>/dev/null | awk 'NR==2 { printf "Disk /: %s used of %.1f GiB\n", $5, $2/1048576 }'
echo "As of: $(date -u '+%Y-%m-%d %H:%M UTC')"
