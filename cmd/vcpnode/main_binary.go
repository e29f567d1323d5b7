//go:build !gendocs

package main

import "os"

// main is the binary's; -tags gendocs builds the documentation generator
// (gendocs.go) from the same commands instead.
func main() {
	a := newApp()
	a.prog = progName(os.Args[0])
	os.Exit(execute(a, os.Args[1:]))
}
