//go:build unix

package mcp

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// An "escape" server starts the test binary as an escapee before it
// serves: a grandchild of the daemon that calls setsid (a session and
// process group of its own), ignores SIGTERM and sleeps, its stdio on
// /dev/null. It leaves its pid as the marker "grandchild"; the server
// serves only once that is written (the escapee closes the ready pipe).

func startEscapee() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envServerKind+"=") {
			env = append(env, kv)
		}
	}
	env = append(env, envServerKind+"=escapee")
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = os.StartProcess(self, []string{self}, &os.ProcAttr{Env: env, Files: []*os.File{null, null, null, w}})
	w.Close()
	if err != nil {
		return err
	}
	_, _ = r.Read(make([]byte, 1)) // EOF once the escapee is ready
	return nil
}

func runEscapee() {
	signal.Ignore(syscall.SIGTERM)
	if _, err := syscall.Setsid(); err != nil {
		os.Exit(5)
	}
	mark("grandchild", fmt.Sprint(os.Getpid()))
	_ = os.NewFile(3, "ready").Close()
	time.Sleep(10 * time.Minute)
}
