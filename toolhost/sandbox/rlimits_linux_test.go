package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
)

// forkBomb forks children that sleep until a fork fails, and fails with
// it (a traceback naming BlockingIOError).
const forkBomb = `
import os, time
while True:
    if os.fork() == 0:
        os.close(1)  # the test reads stdout to its end
        time.sleep(60)
        os._exit(0)
`

// withoutCgroupLimits makes e's sandbox hold its limits as a daemon
// without a cgroup of its own does: by rlimits of each process.
func (e *confinedEnv) withoutCgroupLimits() *confinedEnv {
	e.sb.limits.v1, e.sb.limits.v2 = map[string]string{}, map[string]bool{}
	return e
}

// TestRlimitHitsNamed: where rlimits hold the limits (no cgroup), a call
// that failed at one says so in its error, as a cgroup hit is said: a
// process killed by SIGXCPU or SIGXFSZ names that rlimit; a crash out of
// memory under the profile's RLIMIT_DATA and a refused fork under its
// RLIMIT_NPROC (which does not bind root) name the profile's limit as
// probably reached, the kernel counting no hits of an rlimit.
func TestRlimitHitsNamed(t *testing.T) {
	t.Parallel()
	py := python(t)
	e := newConfinedEnv(t, map[string]Spec{
		"small": {Extends: Default, Memory: "64MiB"},
		"forks": {Extends: Default, Pids: 16},
	}).withoutCgroupLimits()
	cases := []struct {
		name, profile string
		argv          []string
		want          string
	}{
		{"cpu time", Default, []string{"sh", "-c", "ulimit -S -t 1; exec " + py + ` -c "while True: pass"`},
			"the CPU time rlimit (RLIMIT_CPU) reached: a process was killed by SIGXCPU"},
		{"file size", Default, []string{"sh", "-c", "ulimit -S -f 1; exec head -c 100000 /dev/zero > big"},
			"the file size rlimit (RLIMIT_FSIZE) reached: a process was killed by SIGXFSZ"},
		{"file size in a child", Default, []string{"bash", "-c", "ulimit -S -f 1; head -c 100000 /dev/zero > big; exit 1"},
			"the file size rlimit (RLIMIT_FSIZE) reached"},
		{"memory", "small", []string{py, "-c", allocate},
			`probably the memory limit 64MiB (held by RLIMIT_DATA, per process: the kernel counts no hits): "MemoryError"`},
		{"pids", "forks", []string{py, "-c", forkBomb},
			"probably the pids limit 16 (held by RLIMIT_NPROC"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			switch {
			case c.profile == "small" && raceBuild:
				t.Skip("a race-built launcher does not run under a 64 MiB RLIMIT_DATA")
			case c.profile == "forks" && os.Geteuid() == 0:
				t.Skip("RLIMIT_NPROC does not bind root: the pids limit is not held without a cgroup (the rerun as an ordinary user tries it)")
			}
			path, err := exec.LookPath(c.argv[0])
			if err != nil {
				t.Skipf("%s is not installed", c.argv[0])
			}
			_, err = e.startLimited(t, c.profile, append([]string{path}, c.argv[1:]...)...)
			if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			t.Logf("%v", err)
		})
	}
	// A failure that is no rlimit's names none.
	if _, err := e.startLimited(t, "small", "/bin/sh", "-c", "echo 'no such thing' >&2; exit 3"); err == nil || errors.Is(err, ErrLimit) {
		t.Errorf("a plain failure: %v, want it as it is", err)
	}
}

// TestRlimitHitsAsOrdinaryUser runs TestRlimitHitsNamed again as uid
// 65534 without a delegated cgroup, where rlimits are all there is and
// RLIMIT_NPROC binds.
func TestRlimitHitsAsOrdinaryUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("already an ordinary user: the tests of this run are the user's")
	}
	testuser.Rerun(t, "^TestRlimitHitsNamed$")
}
