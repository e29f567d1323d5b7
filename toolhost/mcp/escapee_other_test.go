//go:build !unix

package mcp

import (
	"errors"
	"os"
)

// The escapee needs setsid: a Unix system.
func startEscapee() error { return errors.New("the escapee needs a Unix system") }

func runEscapee() { os.Exit(5) }
