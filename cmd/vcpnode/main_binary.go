//go:build !gendocs

package main

import "os"

// main is the binary's; -tags gendocs builds the documentation generator
// (gendocs.go) from the same commands instead.
func main() {
	os.Exit(execute(newApp(), os.Args[1:]))
}
