//go:build unix

package proctreetest

import (
	"os"
	"os/signal"
	"syscall"
)

// escape leaves the session and process group of the process that
// started it and ignores SIGTERM.
func escape() error {
	signal.Ignore(syscall.SIGTERM)
	_, err := syscall.Setsid()
	return err
}

// ready closes fd 3, the pipe startAndWait reads: nothing polls.
func ready() { _ = os.NewFile(3, "ready").Close() }

// startAndWait starts the escapee with a pipe as its fd 3 and waits for
// the EOF it sends once running.
func startAndWait(self string, env []string, stdio []*os.File, _ string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	p, err := os.StartProcess(self, []string{self}, &os.ProcAttr{Env: env, Files: append(stdio, w)})
	w.Close()
	if err != nil {
		return err
	}
	_, _ = r.Read(make([]byte, 1)) // EOF once the escapee is ready, or gone
	return p.Release()
}
