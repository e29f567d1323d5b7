//go:build unix && !linux

package inheritfd

// KeepFromChildren marks every file descriptor above stderr
// close-on-exec (see the Linux one for why). /dev/fd lists them on macOS;
// on a BSD without fdescfs it lists only 0-2, and inherited descriptors
// above those stay open in children.
func KeepFromChildren() error { return closeOnExecListed("/dev/fd", 3) }
