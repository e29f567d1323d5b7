package outbox

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rs/zerolog"
)

// BenchmarkOutboxDrain drains a backlog left by a previous run, batch by
// batch as sessions do, with a send that does nothing: the cost per message
// should not grow with the backlog (it did: each batch listed the directory).
func BenchmarkOutboxDrain(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				state := b.TempDir()
				fillOutbox(b, state, n)
				o, err := Open(state, make(chan struct{}, 1), zerolog.Nop())
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for o.Waiting() > 0 {
					if err := o.Drain(func(json.RawMessage) error { return nil }); err != nil {
						b.Fatal(err)
					}
					o.Confirm(o.Mark())
				}
				b.StopTimer()
				o.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/msg")
		})
	}
}
