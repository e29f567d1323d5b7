package plugin

import (
	"os"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

func BenchmarkTmpOneMode(b *testing.B) {
	trees, err := proctree.New(proctree.Options{})
	if err != nil {
		b.Skip(err)
	}
	b.Cleanup(trees.Close)
	name := os.Getenv("TMPMODE")
	sb, call := benchShell(b, trees, name)
	call()
	call()
	b.ResetTimer()
	cpu0 := daemonCPU()
	for range b.N {
		if name == "default" {
			testwait.For(b, "wait", func() bool { return sb.WaitingLaunchers() == 2 })
		}
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	if name == "default" {
		testwait.For(b, "wait", func() bool { return sb.WaitingLaunchers() == 2 })
	}
	b.ReportMetric(float64((daemonCPU()-cpu0).Microseconds())/float64(b.N), "cpu-us")
}
