//go:build !unix

package direct

import (
	"errors"
	"os"
	"syscall"
)

// processGroups is false: hosting Node.js plugins needs a Unix system.
const processGroups = false

func groupAttr() *syscall.SysProcAttr { return nil }

func signalGroup(int, syscall.Signal) error { return nil }

func groupAlive(int) bool { return false }

func socketPair() (ours, theirs *os.File, err error) {
	return nil, nil, errors.New("hosting Node.js plugins needs a Unix system")
}
