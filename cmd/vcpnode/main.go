// Command vcpnode makes this machine a distributed node of a VCP main server.
package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// execute runs the command line args and returns the process's exit code.
func execute(a *app, args []string) int {
	a.helpErr = nil
	root := newRootCmd(a)
	if args == nil {
		args = []string{} // cobra would read os.Args for nil: only args counts
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	a.flushLogs() // before the last error, and before the process exits
	if err == nil {
		err = a.helpErr
	}
	return report(a.stderr, cmd, err)
}

// report prints err as "vcpnode: <message>" (every line of it, so that a
// list of config problems stays greppable) and picks the exit code. A usage
// error points at the help of cmd, the command that refused it.
func report(stderr io.Writer, cmd *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	if code, ok := errorExitStatus(err); ok {
		return code // a command's own status (sandbox run): it said why itself
	}
	// The key never reaches an error on purpose; redacting here catches
	// a library error that echoes a URL.
	for line := range strings.SplitSeq(config.Redact(err.Error()), "\n") {
		fmt.Fprintf(stderr, "vcpnode: %s\n", line)
	}
	if errors.As(err, new(*usageError)) {
		path := "vcpnode"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", path)
		return exitUsage
	}
	return exitError
}

// usageError is a mistake in the command line rather than a failure.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}
