package toolhost

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkDispatch measures the dispatcher's own cost per call (accept,
// slot, invoke, encode, reply) with a tool that returns at once.
func BenchmarkDispatch(b *testing.B) {
	tool := newFuncTool("Fast", func(context.Context, Call) (any, error) { return "ok", nil })
	b.Run("sequential", func(b *testing.B) {
		d := newTestDispatcher(b, Policy{}, Limits{}, tool)
		done := make(chan Outcome, 1)
		reply := func(o Outcome) { done <- o }
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if !d.Dispatch(context.Background(), "Fast", Call{RequestID: strconv.Itoa(i)}, reply) {
				b.Fatal("refused")
			}
			if o := <-done; o.Err != "" {
				b.Fatal(o.Err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		d := newTestDispatcher(b, Policy{}, Limits{}, tool)
		var next atomic.Int64
		b.ReportAllocs()
		b.SetParallelism(4) // 4×GOMAXPROCS callers: more than the 8 slots, fewer than slots+queue
		b.RunParallel(func(pb *testing.PB) {
			done := make(chan Outcome, 1)
			reply := func(o Outcome) { done <- o }
			for pb.Next() {
				id := strconv.FormatInt(next.Add(1), 10)
				if !d.Dispatch(context.Background(), "Fast", Call{RequestID: id}, reply) {
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
