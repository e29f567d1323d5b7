//go:build !unix

package main

import "os"

// fileGID: no Unix groups here.
func fileGID(os.FileInfo) int { return -1 }
