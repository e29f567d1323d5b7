//go:build !linux

// Command vminit is PID 1 of internal/vmtest's Linux test machines.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "vminit: the init of a Linux test machine; runs on Linux only")
	os.Exit(2)
}
