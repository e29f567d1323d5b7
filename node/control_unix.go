//go:build unix

package node

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkSocketDir refuses a directory another user could use to swap the
// socket for their own: it must belong to this user or root, and must not be
// writable by others unless sticky (like /tmp, where only the owner may
// remove an entry).
func checkSocketDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Getuid(); int(st.Uid) != uid && st.Uid != 0 {
		return fmt.Errorf("directory %s belongs to uid %d, not to this user (uid %d) or root; remove it or choose another path", dir, st.Uid, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("directory %s is writable by other users (mode %v); make it 0700 or choose another path", dir, fi.Mode().Perm())
	}
	return nil
}
