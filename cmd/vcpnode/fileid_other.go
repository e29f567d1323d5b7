//go:build !unix

package main

import "os"

// fileID is unknown off unix, where there is no journald either.
func fileID(*os.File) (string, bool) { return "", false }
