//go:build unix

package outbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockStateDir takes an exclusive lock on the state directory for as long as
// the returned file stays open. Two daemons sharing one outbox would race to
// send and delete the same messages; the second is refused instead.
func lockStateDir(stateDir string) (*os.File, error) {
	path := filepath.Join(stateDir, "vcpnode.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the state directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("state directory %s is in use by another vcpnode (pid %s): give each daemon its own [plugins] state_dir",
				stateDir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock the state directory: %w", err)
	}
	// The pid is only a hint for the message above; the lock is what counts.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
