package plugin

import (
	"context"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

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
		profile, cold := strings.CutSuffix(name, "-cold")
		b.Run(name, func(b *testing.B) {
			sb, err := sandbox.New(sandbox.Options{Default: profile, TempDir: b.TempDir(), Home: b.TempDir(), Trees: trees, ColdLaunch: cold})
			if err != nil {
				b.Fatal(err)
			}
			if profile != "none" {
				sandboxtest.NeedFiles(b, sb.Capabilities())
			}
			set := scan(b, newHost(b, Options{Sandbox: sb, ProcessTrees: trees}), pluginRoot(b, "BenchShell"))
			tool := findTool(b, set, "BenchShell")
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			cpu0, kids0 := daemonCPU(), childrenCPU()
			sequential(b, func() error { _, err := call(context.Background(), tool, nil); return err })
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
