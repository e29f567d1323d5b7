package direct

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost"
)

// The cost of a warm direct plugin call (its Node.js host already running,
// a module that returns at once) next to an in-process Go tool, both
// through the dispatcher the node uses. Run with
//
//	go test -run '^$' -bench WarmCall -benchmem ./toolhost/direct/
//
// "parallel" keeps 4×GOMAXPROCS calls in flight.
func BenchmarkWarmCall(b *testing.B) {
	needNode(b)
	_, fast := loadPlugin(b, Options{}, "Fast")
	reg := toolhost.NewRegistry()
	for _, t := range []toolhost.Tool{fast, inProcess{}} {
		if err := reg.Add(t); err != nil {
			b.Fatal(err)
		}
	}
	d := toolhost.NewDispatcher(reg, toolhost.Policy{}, toolhost.Limits{MaxConcurrent: 64}, zerolog.Nop())
	b.Cleanup(func() { _ = d.Shutdown(context.Background()) })
	for _, name := range []string{"InProcess", "Fast"} {
		b.Run(name+"/sequential", func(b *testing.B) {
			done := make(chan toolhost.Outcome, 1)
			reply := func(o toolhost.Outcome) { done <- o }
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if !d.Dispatch(context.Background(), name, toolhost.Call{RequestID: strconv.Itoa(i)}, reply) {
					b.Fatal("refused")
				}
				if o := <-done; o.Err != "" {
					b.Fatal(o.Err)
				}
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			var next atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				done := make(chan toolhost.Outcome, 1)
				reply := func(o toolhost.Outcome) { done <- o }
				for pb.Next() {
					id := "p" + strconv.FormatInt(next.Add(1), 10)
					if !d.Dispatch(context.Background(), name, toolhost.Call{RequestID: id}, reply) {
						b.Error("refused")
						return
					}
					if o := <-done; o.Err != "" {
						b.Error(o.Err)
						return
					}
				}
			})
		})
	}
}

// inProcess is a Go tool that answers at once with the same result.
type inProcess struct{}

func (inProcess) Spec() toolhost.Spec {
	return toolhost.Spec{Name: "InProcess", DistributedExposed: true}
}

func (inProcess) Invoke(context.Context, toolhost.Call) (any, error) {
	return map[string]bool{"ok": true}, nil
}
