package sandbox

import (
	"os"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// BenchmarkConfinedShNamespaces: a `sh -c true` call confined under
// default through the launcher, with the call's namespaces (PID and mount
// namespaces, /proc, /dev/shm and /tmp, and for an ordinary user a user
// namespace) and with them switched off, in one run, so the difference is
// what the namespaces cost per call. Run with
//
//	go test -run '^$' -bench ConfinedShNamespaces ./toolhost/sandbox/
func BenchmarkConfinedShNamespaces(b *testing.B) {
	for _, c := range []struct {
		name string
		ns   bool
	}{{"namespaces", true}, {"no-namespaces", false}} {
		b.Run(c.name, func(b *testing.B) {
			e := newConfinedEnvMode(b, nil, proctree.ModeAuto)
			if !c.ns {
				noNamespaces(e.sb)
			} else if !e.sb.caps.PidNS {
				b.Skipf("no namespaces for calls here: %s", e.sb.caps.NSWhy)
			}
			devnull, err := os.Open(os.DevNull)
			if err != nil {
				b.Fatal(err)
			}
			defer devnull.Close()
			b.ResetTimer()
			for b.Loop() {
				r, err := e.sb.Wrap(Command{Tool: "bench", Profile: Default, Path: "/bin/sh", Args: []string{"sh", "-c", "true"},
					Env: []string{"PATH=/usr/bin:/bin"}, Dir: e.dir})
				if err != nil {
					b.Fatal(err)
				}
				proc, tree, err := r.StartProcess(e.trees, &os.ProcAttr{Dir: e.dir, Files: []*os.File{devnull, devnull, devnull}})
				if err != nil {
					b.Fatal(err)
				}
				if st, err := proc.Wait(); err != nil || !st.Success() {
					b.Fatalf("sh: %v %v", st, err)
				}
				_ = tree.KillAndWait(5e9)
				tree.Release()
				r.Close()
			}
		})
	}
}
