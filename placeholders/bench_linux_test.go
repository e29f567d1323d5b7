package placeholders

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// BenchmarkCommandRun: a placeholder command (`echo v`) unconfined (none)
// and confined (default), run back to back or spaced (before each run,
// outside the timer, the sandbox's launchers that wait for calls are
// there, as for commands on a schedule; where a start never takes one the
// pool never fills, and the runs are simply spaced). It reports the time
// from the start of the shell to its value, the daemon's allocations and
// its CPU time (daemon-cpu-ns/op: this process's, not its children's).
func BenchmarkCommandRun(b *testing.B) {
	for _, mode := range []string{"none", "default", "default-spaced"} {
		b.Run(mode, func(b *testing.B) {
			profile := "default"
			if mode == "none" {
				profile = "none"
			}
			c := confinedCommand(b, profile, b.TempDir(), b.TempDir(), "echo v")
			ctx := context.Background()
			run := func() {
				if out, err := c.Run(ctx); err != nil || out.Text != "v\n" {
					b.Fatalf("Run = %+v, %v", out, err)
				}
			}
			run()
			run()
			pooled := mode == "default-spaced"
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := selfCPU(b) // the refills' too: the launcher a run takes is replaced
			for range b.N {
				if pooled {
					b.StopTimer()
					wait, cancel := context.WithTimeout(ctx, 2*time.Second)
					pooled = testwait.Poll(wait, func() bool { return c.Sandbox.WaitingLaunchers() == 2 })
					cancel()
					b.StartTimer()
				}
				run()
			}
			b.StopTimer()
			b.ReportMetric(float64(selfCPU(b)-cpu0)/float64(b.N), "daemon-cpu-ns/op")
		})
	}
}

// selfCPU is the CPU time this process used so far (user and system).
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
