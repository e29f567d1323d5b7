//go:build !unix

package builtin

import "os"

// keepOwner does nothing here: file tools are not supported off unix.
func keepOwner(*os.File, os.FileInfo) {}
