//go:build unix

package plugin

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// The cost of a synchronous plugin call next to the floor: starting the
// same command without vcpnode. Run with
//
//	go test -run '^$' -bench 'SpawnFloor|SyncPluginRun' -benchmem ./toolhost/plugin/
//
// Commands: `echo {}` (a builtin under sh, /usr/bin/echo when spawned
// directly) and `cat` (an external program either way, like node or
// python; it echoes the "{}" arguments from stdin). "sh" runs them under
// /bin/sh -c, "direct" without a shell. "parallel16" keeps 16 calls in flight.

const inFlightCalls = 16

func BenchmarkSpawnFloor(b *testing.B) {
	floors := []struct {
		name string
		argv []string
	}{
		{"echo/sh", []string{shellPath, "-c", "echo {}"}},
		{"echo/direct", []string{lookPathB(b, "echo"), "{}"}},
		{"cat/sh", []string{shellPath, "-c", "'cat'"}},
		{"cat/direct", []string{lookPathB(b, "cat")}},
	}
	for _, f := range floors {
		run := func() error {
			cmd := exec.Command(f.argv[0], f.argv[1:]...)
			cmd.Stdin = strings.NewReader("{}")
			_, err := cmd.Output()
			return err
		}
		b.Run(f.name+"/sequential", func(b *testing.B) { sequential(b, run) })
		b.Run(f.name+"/parallel16", func(b *testing.B) { parallel(b, inFlightCalls, run) })
	}
}

func BenchmarkSyncPluginRun(b *testing.B) {
	root := pluginRoot(b, "BenchDirect", "BenchShell", "BenchCat", "BenchCatShell")
	set := scan(b, newHost(b, Options{}), root)
	for _, c := range []struct {
		name, plugin string
		shell        bool
	}{
		{"echo/sh", "BenchShell", true},
		{"echo/direct", "BenchDirect", false},
		{"cat/sh", "BenchCatShell", true},
		{"cat/direct", "BenchCat", false},
	} {
		tool := findTool(b, set, c.plugin)
		if l := tool.(*pluginTool).run.launch; l.shell != c.shell {
			b.Fatalf("%s: launch %+v", c.plugin, l)
		}
		run := func() error { _, err := call(context.Background(), tool, nil); return err }
		b.Run(c.name+"/sequential", func(b *testing.B) { sequential(b, run) })
		b.Run(c.name+"/parallel16", func(b *testing.B) { parallel(b, inFlightCalls, run) })
	}
}

func lookPathB(b *testing.B, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		b.Fatalf("no %s on PATH: %v", name, err)
	}
	return p
}

func sequential(b *testing.B, run func() error) {
	b.ReportAllocs()
	for b.Loop() {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
}

// parallel keeps n calls in flight whatever GOMAXPROCS is.
func parallel(b *testing.B, n int, run func() error) {
	b.ReportAllocs()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range n {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := run(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
