//go:build !unix

package proctreetest

import (
	"errors"
	"os"
	"time"
)

// escape has no session to leave here (Windows): the escapee is a plain
// grandchild that a job object must catch.
func escape() error { return nil }

func ready() {}

// startAndWait starts the escapee and waits for its pid file: Windows
// passes no extra descriptors to a child, so there is no pipe to close.
func startAndWait(self string, env []string, stdio []*os.File, pidFile string) error {
	p, err := os.StartProcess(self, []string{self}, &os.ProcAttr{Env: env, Files: stdio})
	if err != nil {
		return err
	}
	defer p.Release()
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(pidFile); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the escapee never wrote its pid file")
		}
		time.Sleep(10 * time.Millisecond) // a fake process polling a file, not test synchronisation
	}
}
