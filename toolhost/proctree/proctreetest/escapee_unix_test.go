//go:build unix

package proctreetest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	RunEscapeeIfAsked()
	os.Exit(m.Run())
}

// The escapee runs once StartEscapee returns, its pid written, in a
// session of its own (so a process-group kill misses it).
func TestStartEscapee(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "escapee.pid")
	if err := StartEscapee(pidFile, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("no pid file once StartEscapee returned: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("pid file holds %q", b)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		var status syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &status, 0, nil)
	})
	sid, err := unix.Getsid(pid)
	if err != nil {
		t.Fatal(err)
	}
	if sid != pid {
		t.Errorf("escapee %d is in session %d; want a session of its own", pid, sid)
	}
	if own, _ := unix.Getsid(0); sid == own {
		t.Errorf("escapee shares the test's session %d", own)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	testwait.For(t, "the escapee to end after SIGKILL", func() bool { return Gone(pid) || reaped(pid) })
}

// reaped reaps pid if it is our zombie and reports whether it was.
func reaped(pid int) bool {
	var status syscall.WaitStatus
	got, _ := syscall.Wait4(pid, &status, syscall.WNOHANG, nil)
	return got == pid
}
