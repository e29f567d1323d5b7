// Package servicetest stands in for the service managers' commands in the
// tests of the service library and of the `service` commands.
package servicetest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Commands stands in for systemctl, launchctl and systemd-sysusers: it
// records every command line and fails those that start with a prefix in
// Fail, with the exit code given.
type Commands struct {
	mu   sync.Mutex
	ran  []string
	Fail map[string]int
}

// New is a Commands that fails nothing yet.
func New() *Commands { return &Commands{Fail: map[string]int{}} }

// ExitCode is the error of a failed command: it has an exit code, as
// *exec.ExitError has.
type ExitCode int

func (e ExitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// ExitCode is the command's exit status.
func (e ExitCode) ExitCode() int { return int(e) }

// Run records argv and fails it when a prefix in Fail says so, writing
// "NAME failed" to out as a failing command would say something.
func (f *Commands) Run(_ context.Context, out io.Writer, argv []string) error {
	line := strings.Join(argv, " ")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran = append(f.ran, line)
	for prefix, code := range f.Fail {
		if strings.HasPrefix(line, prefix) {
			fmt.Fprintf(out, "%s failed\n", argv[0])
			return ExitCode(code)
		}
	}
	return nil
}

// Take returns the command lines run since the last Take, and forgets them.
func (f *Commands) Take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ran := f.ran
	f.ran = nil
	return ran
}
