//go:build unix

package plugin

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// Checks that a plugin left no process behind (Unix process groups).

// procStat reads a process's state and parent from /proc (Linux only).
func procStat(pid int) (state string, ppid int, ok bool) {
	if runtime.GOOS != "linux" {
		return "", 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0], ppid, true
}

// groupGone reports whether process group pgid has no live member.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// assertGroupGone waits until the group and the listed pids are gone.
func assertGroupGone(t testing.TB, pgid int, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		testwait.For(t, "process "+strconv.Itoa(pid)+" to end", func() bool { return proctreetest.Collected(pid) })
	}
	// Zombies of other parents still count as group members until reaped;
	// the pids above are gone or such zombies, so the group empties soon.
	testwait.For(t, "process group "+strconv.Itoa(pgid)+" to empty", func() bool {
		if groupGone(pgid) {
			return true
		}
		for _, pid := range pids {
			if state, _, ok := procStat(pid); ok && state != "Z" {
				return false
			}
		}
		return runtime.GOOS == "linux" && allZombies(pgid)
	})
}

// allZombies reports whether every process of group pgid is a zombie of
// another parent (Linux only).
func allZombies(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		if f[0] != "Z" || pid == os.Getpid() {
			return false
		}
	}
	return true
}
