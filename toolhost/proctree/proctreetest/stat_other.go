//go:build unix && !linux

package proctreetest

// Without /proc, kill(pid, 0) is all Gone has: a zombie still counts as
// running.
const procfs = false

func procEnded(int) (ended bool, ppid int, found bool) { return false, 0, false }
