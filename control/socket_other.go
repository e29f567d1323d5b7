//go:build !unix

package control

// checkSocketDir has nothing to check where there are no Unix owners and modes.
func checkSocketDir(string) error { return nil }

func groupCannotReach(string, int) string { return "" }
