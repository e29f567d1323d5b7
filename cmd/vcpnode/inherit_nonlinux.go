//go:build unix && !linux

package main

// keepInheritedFromChildren marks every file descriptor above stderr
// close-on-exec (see the Linux one for why). /dev/fd lists them on macOS;
// on a BSD without fdescfs it lists only 0-2, and inherited descriptors
// above those stay open in children.
func keepInheritedFromChildren() error { return closeOnExecListed("/dev/fd") }
