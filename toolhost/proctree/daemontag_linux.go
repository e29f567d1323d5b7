package proctree

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A daemon names the cgroups it makes (its trees', the sandbox's limit
// groups) after itself, so that the next daemon can remove those of one
// that died: DaemonTag, "<pid>.<PID namespace>". The pid alone is not
// enough: a daemon in another PID namespace (a container's PID 1 sharing
// the machine's cgroup tree) sees no process with that pid and would take
// a running daemon for dead, killing every tool it runs.

// initialPIDNS is the inode of the machine's first PID namespace (the
// kernel's PROC_PID_INIT_INO).
const initialPIDNS = 0xEFFFFFFC

// pidNS is the inode of this process's PID namespace; 0 if unknown.
var pidNS = sync.OnceValue(func() uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/pid", &st); err != nil {
		return 0
	}
	return st.Ino
})

// DaemonTag names this daemon in the cgroups it makes: its pid, and its
// PID namespace where it can be read.
func DaemonTag() string {
	tag := strconv.Itoa(os.Getpid())
	if ns := pidNS(); ns != 0 {
		tag += "." + strconv.FormatUint(ns, 10)
	}
	return tag
}

// DaemonGone reports whether the daemon that a cgroup's name was tagged
// with (DaemonTag) has ended, as far as this process can tell: only a
// daemon of this PID namespace can be seen to be gone. A name without a
// namespace (an older daemon's) is judged from the machine's first PID
// namespace only, where every pid is visible.
func DaemonGone(tag string) bool {
	pidText, nsText, tagged := strings.Cut(tag, ".")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	own := pidNS()
	if tagged {
		ns, err := strconv.ParseUint(nsText, 10, 64)
		if err != nil || ns != own {
			return false
		}
	} else if own != initialPIDNS {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
