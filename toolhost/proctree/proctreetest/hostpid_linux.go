package proctreetest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// HostPid is the pid, as this process sees it, of the process that reported
// nsPid as its own and works in dir or below: a confined tool runs in a PID
// namespace of its own, so the pid it reports (its getpid, $$) is that
// namespace's. The working directory tells it from the processes of other
// namespaces with the same pid there. 0: no such process runs (any more).
func HostPid(nsPid int, dir string) int {
	dir = filepath.Clean(dir)
	return hostPid(nsPid, func(pid string) bool {
		cwd, err := os.Readlink("/proc/" + pid + "/cwd")
		return err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/"))
	})
}

// HostPidMarked is HostPid for a process whose environment holds mark
// ("NAME=VALUE"; see KillMarked) instead of a working directory.
func HostPidMarked(nsPid int, mark string) int {
	return hostPid(nsPid, func(pid string) bool {
		env, err := os.ReadFile("/proc/" + pid + "/environ")
		return err == nil && bytes.Contains(append([]byte{0}, env...), []byte("\x00"+mark+"\x00"))
	})
}

func hostPid(nsPid int, in func(pid string) bool) int {
	if nsPid <= 0 {
		return 0
	}
	want := strconv.Itoa(nsPid)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				f := strings.Fields(v)
				if len(f) > 0 && f[len(f)-1] == want && in(e.Name()) {
					n, _ := strconv.Atoi(e.Name())
					return n
				}
				break
			}
		}
	}
	return 0
}

// GoneIn is Gone for a pid a tool reported from its namespace (HostPid).
func GoneIn(nsPid int, dir string) bool {
	pid := HostPid(nsPid, dir)
	return pid == 0 || Gone(pid)
}
