package proctreetest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// EscapeeScript is the escapee for code that runs shell commands: shell
// lines that start a grandchild which calls setsid, ignores SIGTERM and
// sleeps, and wait until it runs (on a fifo in dir: nothing polls), its pid
// then in $gc. The grandchild inherits the shell's environment: mark it
// with a variable and end it with KillMarked at cleanup. A dir that would
// need shell quoting skips the test.
func EscapeeScript(t testing.TB, dir string) string {
	t.Helper()
	if strings.ContainsAny(dir, " '\"$\\`") {
		t.Skipf("temporary directory %q would need shell quoting", dir)
	}
	fifo := filepath.Join(dir, "escapee.fifo")
	return fmt.Sprintf(`mkfifo %[1]s || exit 9
setsid sh -c 'trap "" TERM; echo $$ > %[1]s; exec sleep 600' </dev/null >/dev/null 2>&1 &
read gc < %[1]s`, fifo)
}

// KillMarked kills pid if its environment holds mark ("NAME=VALUE"): a
// test's own process, never a stranger that reused the pid.
func KillMarked(pid int, mark string) {
	if pid <= 0 {
		return
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err == nil && bytes.Contains(append([]byte{0}, env...), []byte("\x00"+mark+"\x00")) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
