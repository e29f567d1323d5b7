//go:build !unix

package inheritfd

// KeepFromChildren has nothing to do on Windows: os/exec hands a
// child only the handles it names.
func KeepFromChildren() error { return nil }
