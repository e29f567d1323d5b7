package proctree

import (
	"testing"

	"github.com/rs/zerolog"
)

// BenchmarkTreeBookkeeping is what a tree adds to a plugin run besides the
// fork and exec: NewTree, Started (no process behind it) and Release; in
// ModeCgroup a mkdir, an open and an rmdir of the run's cgroup.
func BenchmarkTreeBookkeeping(b *testing.B) {
	for _, mode := range []Mode{ModeCgroup, ModeProcessGroup} {
		b.Run(mode.String(), func(b *testing.B) {
			m, err := New(Options{Mode: mode, Log: zerolog.Nop()})
			if err != nil {
				b.Skipf("%s unavailable: %v", mode, err)
			}
			defer m.Close()
			for b.Loop() {
				t, err := m.NewTree()
				if err != nil {
					b.Fatal(err)
				}
				t.Release()
			}
		})
	}
}

// BenchmarkReadProcs is one /proc walk of ModeSubreaper (every process's
// stat), which Alive, Kill and the walker pay.
func BenchmarkReadProcs(b *testing.B) {
	for b.Loop() {
		if len(readProcs()) == 0 {
			b.Fatal("no process read")
		}
	}
}
