package sandbox

import (
	"os"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// benchEnv is a confined environment for a start benchmark's mode: "cold"
// starts a launcher for each call, a "-no-ns" suffix switches the call
// namespaces off; it returns the mode without that suffix. It skips where
// calls get no namespaces but the mode wants them.
func benchEnv(b *testing.B, mode string) (*confinedEnv, string) {
	b.Helper()
	e := newConfinedEnv(b, nil)
	if strings.HasSuffix(mode, "-no-ns") {
		e.withoutNamespaces()
		mode = strings.TrimSuffix(mode, "-no-ns")
	} else if mode != "none" && !e.sb.caps.PidNS {
		b.Skipf("no namespaces for calls here: %s", e.sb.caps.NSWhy)
	}
	if mode == "cold" {
		o := *e.sb.opts.Load()
		o.ColdLaunch = true
		_ = e.sb.Update(o)
	}
	return e, mode
}

// BenchmarkConfinedStart: start `true` and wait for it, unconfined (none),
// confined through a launcher started for the call (cold), through one
// that waited (pooled: the pool is full at each start, its refill outside
// the timer), and back to back (the pool refills while the next calls run);
// cold and pooled once more without the call's namespaces (the difference
// is what they cost).
func BenchmarkConfinedStart(b *testing.B) {
	for _, mode := range []string{"none", "cold", "pooled", "back-to-back", "cold-no-ns", "pooled-no-ns"} {
		b.Run(mode, func(b *testing.B) {
			e, mode := benchEnv(b, mode)
			profile := Default
			if mode == "none" {
				profile = None
			}
			start := func() { e.startTrue(b, profile) }
			start()
			start()
			b.ResetTimer()
			for range b.N {
				if mode == "pooled" {
					b.StopTimer()
					testwait.For(b, "the pool to fill", func() bool { return e.sb.launchers.waiting() == poolSize })
					b.StartTimer()
				}
				start()
			}
		})
	}
}

// startTrue starts `true` under profile, waits for it and returns the pid
// of the process the daemon started (the launcher).
func (e *confinedEnv) startTrue(b *testing.B, profile string) int {
	stepEnd("daemon: call")
	r, err := e.sb.Wrap(Command{Tool: "probe", Profile: profile, Path: "/bin/true", Args: []string{"true"}, Dir: e.dir})
	if err != nil {
		b.Fatal(err)
	}
	stepEnd("daemon: wrapped")
	proc, tree, err := r.StartProcess(e.trees, &os.ProcAttr{Dir: e.dir})
	if err != nil {
		r.Close()
		b.Fatal(err)
	}
	stepEnd("daemon: process started")
	_, _ = proc.Wait()
	stepEnd("daemon: launcher reaped")
	_ = tree.KillAndWait(5e9)
	tree.Release()
	stepEnd("daemon: tree released")
	r.Close()
	stepEnd("daemon: run closed")
	return proc.Pid
}
