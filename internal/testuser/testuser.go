//go:build unix

package testuser

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nobody is the uid and gid the tests run again as.
const Nobody = 65534

// Rerun runs the tests of this binary that pattern matches as uid Nobody,
// and fails t if they fail; each of their PASS and SKIP lines is logged.
// It skips t where the test binary is not root (the run is then a user's
// already) or under -short.
func Rerun(t *testing.T, pattern string) {
	t.Helper()
	rerun(t, pattern, nil)
}

// rerun is Rerun with join, when not nil, adapting the command that starts
// the copy (as nobody, with its argv and environment set).
func rerun(t *testing.T, pattern string, join func(*exec.Cmd)) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("already an ordinary user: the tests of this run are the user's")
	}
	if testing.Short() {
		t.Skip("-short: the tests run again as a user only in a full run")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Somewhere nobody can reach: under /tmp, not the test's private TempDir.
	dir, err := os.MkdirTemp("", "vcpnode-asuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, Nobody, Nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	// No fork of this process while the copy is open for writing: a child
	// holding that fd until its exec makes the copy's exec fail with
	// ETXTBSY ("text file busy"), which parallel tests that start
	// processes did now and then.
	syscall.ForkLock.Lock()
	err = os.WriteFile(bin, data, 0o755)
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", pattern, "-test.v", "-test.count=1")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + tmp, "TMPDIR=" + tmp}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody}}
	if join != nil {
		join(cmd)
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as uid %d: %v\n%s", Nobody, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "--- SKIP") || strings.Contains(line, "--- PASS") {
			t.Logf("as uid %d: %s", Nobody, strings.TrimSpace(line))
		}
	}
}
