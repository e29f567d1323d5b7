//go:build !linux

// Command soak is vcpnode's chaos soak; it reads /proc and uses Linux
// signals and namespaces, so it runs on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "soak: runs on Linux only (it reads /proc and uses Linux namespaces)")
	os.Exit(2)
}
