//go:build unix

package control

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// groupCannotReach explains why members of the group gid could not open the
// socket at path although it is theirs: a directory on the way they may not
// search. "" when they can.
func groupCannotReach(path string, gid int) string {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return ""
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		perm := fi.Mode().Perm()
		if ok && perm&0o001 == 0 && (int(st.Gid) != gid || perm&0o010 == 0) {
			return fmt.Sprintf("members of [control] group cannot reach the control socket: directory %s (mode %04o) does not let them in; make it 0755 (systemd: RuntimeDirectoryMode=0755, as the shipped units do; the socket's own mode still decides), give it to the group with mode 0750, or let vcpnode make it", dir, perm)
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
	}
}
