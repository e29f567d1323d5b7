// Package sdnotify tells systemd what the daemon is doing over the
// sd_notify protocol (sd_notify(3)): READY=1, RELOADING=1, STOPPING=1, a
// STATUS= line, and WATCHDOG=1 pings when the unit sets WatchdogSec=.
// Without $NOTIFY_SOCKET every method does nothing, so callers need no
// check of their own.
package sdnotify
