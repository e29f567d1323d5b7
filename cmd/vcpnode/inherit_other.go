//go:build !unix

package main

// keepInheritedFromChildren has nothing to do on Windows: os/exec hands a
// child only the handles it names.
func keepInheritedFromChildren() error { return nil }
