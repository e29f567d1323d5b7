package testlog

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Run with -race: concurrent writes and reads must not race, and no line
// may be lost or torn.
func TestBufferConcurrentWriters(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				fmt.Fprintf(&b, "w%d-%d\n", w, i)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines, want 400", len(lines))
	}
}

func TestBufferRedacts(t *testing.T) {
	b := Buffer{Redact: func(s string) string { return strings.ReplaceAll(s, "secret", "***") }}
	if n, err := b.Write([]byte("key=secret\n")); n != len("key=secret\n") || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got := b.String(); got != "key=***\n" {
		t.Fatalf("String = %q", got)
	}
}
