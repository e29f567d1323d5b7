package plugin

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// BenchmarkSandboxRoundTrip: a `sh -c "echo '{}'"` plugin call confined
// under each built-in profile, in one run, with the CPU time the daemon
// (this process, not the plugin) spent per call as daemon-cpu-µs/op (wall
// time on a loaded machine is mostly waiting for a core), and what the
// calls left the daemon holding: its heap growth after a GC as heap-B, and
// the growth of the memory the Go runtime holds from the OS (heap, stacks
// of the threads made and discarded per call, runtime structures; Sys less
// HeapReleased) as held-KiB. Run with
//
//	go test -run '^$' -bench SandboxRoundTrip -benchmem ./toolhost/plugin/
func BenchmarkSandboxRoundTrip(b *testing.B) {
	trees, err := proctree.New(proctree.Options{})
	if err != nil {
		b.Skipf("no process trees here: %v", err)
	}
	b.Cleanup(trees.Close)
	for _, name := range []string{"none", "default", "default-cold", "offline"} {
		b.Run(name, func(b *testing.B) {
			_, shCall := benchShell(b, trees, name)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			cpu0, kids0 := daemonCPU(), childrenCPU()
			sequential(b, shCall)
			b.ReportMetric(float64((daemonCPU()-cpu0).Microseconds())/float64(b.N), "daemon-cpu-µs/op")
			// The plugin's processes, and the launcher that confines them.
			b.ReportMetric(float64((childrenCPU()-kids0).Microseconds())/float64(b.N), "children-cpu-µs/op")
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)), "heap-B")
			held := func(m runtime.MemStats) int64 { return int64(m.Sys) - int64(m.HeapReleased) }
			b.ReportMetric(float64(held(after)-held(before))/1024, "held-KiB")
		})
	}
}

// BenchmarkSandboxCallLatency: the call of BenchmarkSandboxRoundTrip
// under none, default handed to a launcher that waited (the pool full
// before the call, as for calls that are not back to back) and default
// with its launcher started for the call (cold), one of each per round,
// so that the machine's load falls on the three alike. It reports each
// one's median and mean wall time and its daemon CPU per call; the pooled
// call's CPU includes the launcher started to replace the one it took.
// Run with
//
//	go test -run '^$' -bench SandboxCallLatency -benchmem -benchtime=300x ./toolhost/plugin/
func BenchmarkSandboxCallLatency(b *testing.B) {
	trees, err := proctree.New(proctree.Options{})
	if err != nil {
		b.Skipf("no process trees here: %v", err)
	}
	b.Cleanup(trees.Close)
	type mode struct {
		name string
		sb   *sandbox.Sandbox
		call func() error
		wall []time.Duration
		cpu  time.Duration
	}
	var modes []*mode
	for _, name := range []string{"none", "default", "default-cold"} {
		sb, shCall := benchShell(b, trees, name)
		m := &mode{name: name, sb: sb, call: shCall}
		for range 2 { // the second starts the pool
			if err := m.call(); err != nil {
				b.Fatal(err)
			}
		}
		modes = append(modes, m)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, m := range modes {
			pooled := m.name == "default"
			if pooled {
				b.StopTimer()
				testwait.For(b, "the launchers to wait", func() bool { return m.sb.WaitingLaunchers() == 2 })
				b.StartTimer()
			}
			cpu0, t0 := daemonCPU(), time.Now()
			if err := m.call(); err != nil {
				b.Fatal(err)
			}
			m.wall = append(m.wall, time.Since(t0))
			if pooled {
				b.StopTimer()
				testwait.For(b, "the launcher's replacement", func() bool { return m.sb.WaitingLaunchers() == 2 })
				b.StartTimer()
			}
			m.cpu += daemonCPU() - cpu0
		}
	}
	b.StopTimer()
	for _, m := range modes {
		slices.Sort(m.wall)
		var sum time.Duration
		for _, d := range m.wall {
			sum += d
		}
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(m.wall[len(m.wall)/2]), m.name+"-p50-ms")
		b.ReportMetric(ms(sum/time.Duration(len(m.wall))), m.name+"-mean-ms")
		b.ReportMetric(ms(m.cpu/time.Duration(len(m.wall))), m.name+"-daemon-cpu-ms")
	}
}

// benchShell is the BenchShell plugin's call under the profile name
// names (a "-cold" suffix: ColdLaunch) and its sandbox.
func benchShell(b *testing.B, trees *proctree.Manager, name string) (*sandbox.Sandbox, func() error) {
	profile, cold := strings.CutSuffix(name, "-cold")
	sb, err := sandbox.New(sandbox.Options{Default: profile, TempDir: b.TempDir(), Home: b.TempDir(), Trees: trees, ColdLaunch: cold})
	if err != nil {
		b.Fatal(err)
	}
	if profile != "none" {
		sandboxtest.NeedFiles(b, sb.Capabilities())
	}
	set := scan(b, newHost(b, Options{Sandbox: sb, ProcessTrees: trees}), pluginRoot(b, "BenchShell"))
	tool := findTool(b, set, "BenchShell")
	return sb, func() error { _, err := call(context.Background(), tool, nil); return err }
}

// daemonCPU is the user and system time this process has used.
func daemonCPU() time.Duration { return cpuOf(syscall.RUSAGE_SELF) }

// childrenCPU is the user and system time of the processes it has waited for.
func childrenCPU() time.Duration { return cpuOf(syscall.RUSAGE_CHILDREN) }

func cpuOf(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
