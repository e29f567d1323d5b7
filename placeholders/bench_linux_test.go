package placeholders

import (
	"context"
	"testing"
)

// BenchmarkCommandRun: a placeholder command (`echo v`) run back to back,
// unconfined (none) and confined (default); the time and allocations are
// the daemon's per run, from the start of the shell to its value.
func BenchmarkCommandRun(b *testing.B) {
	for _, profile := range []string{"none", "default"} {
		b.Run(profile, func(b *testing.B) {
			c := confinedCommand(b, profile, b.TempDir(), b.TempDir(), "echo v")
			ctx := context.Background()
			run := func() {
				if out, err := c.Run(ctx); err != nil || out.Text != "v\n" {
					b.Fatalf("Run = %+v, %v", out, err)
				}
			}
			run()
			run()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				run()
			}
		})
	}
}
