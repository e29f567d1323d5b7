//go:build unix

package builtin

import (
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of the file it replaces, so that a
// node running as root does not take a user's file from them. It can fail
// only when the node may not change owners, and then f stays the node's.
func keepOwner(f *os.File, old os.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}
