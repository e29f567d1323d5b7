package proctreetest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The escapee is the fake process that tests of process trees need: a
// grandchild of the process under test that tries to outlive it. On Unix it
// calls setsid (a session and process group of its own, out of reach of a
// process-group kill) and ignores SIGTERM; everywhere it writes its pid to
// a file and sleeps. A test binary becomes one when StartEscapee starts it,
// so its TestMain must call RunEscapeeIfAsked first.

// escapeeEnv carries the escapee's pid file; set, the process is an escapee.
const escapeeEnv = "PROCTREETEST_ESCAPEE"

// escapeeLife is how long an escapee sleeps: longer than any test, so only
// the code under test (or a test's cleanup) ends it.
const escapeeLife = 10 * time.Minute

// RunEscapeeIfAsked makes this process the escapee when StartEscapee
// started it, and then never returns; otherwise it returns at once.
func RunEscapeeIfAsked() {
	pidFile := os.Getenv(escapeeEnv)
	if pidFile == "" {
		return
	}
	if err := escape(); err != nil {
		os.Exit(5)
	}
	WritePid(pidFile)
	ready()
	time.Sleep(escapeeLife)
	os.Exit(0)
}

// StartEscapee starts this test binary as the escapee, its pid written to
// pidFile, with out as its stdout and stderr (nil: the null device; the
// stdin is always that), and returns once the escapee runs, its pid file
// written. The escapee keeps this process's environment.
func StartEscapee(pidFile string, out *os.File) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if pidFile, err = filepath.Abs(pidFile); err != nil {
		return err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	if out == nil {
		out = null
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), escapeeEnv+"=") {
			env = append(env, kv) // a duplicate key could keep the parent's value
		}
	}
	return startAndWait(self, append(env, escapeeEnv+"="+pidFile), []*os.File{null, out, out}, pidFile)
}

// WritePid writes this process's pid to path whole (by rename), so that a
// reader never sees a part of it.
func WritePid(path string) {
	_ = os.WriteFile(path+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o644)
	_ = os.Rename(path+".tmp", path)
}
