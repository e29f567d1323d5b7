package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// gateWriter records each write; while gated, a write announces itself on
// entered and waits for release.
type gateWriter struct {
	mu      sync.Mutex
	writes  []string
	gated   bool
	entered chan struct{}
	release chan struct{}
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	gated := g.gated
	g.gated = false
	g.mu.Unlock()
	if gated {
		g.entered <- struct{}{}
		<-g.release
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writes = append(g.writes, string(p))
	return len(p), nil
}

func (g *gateWriter) all() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.writes...)
}

// An idle writer writes each line before Write returns; lines that arrive
// during a write go out together in one write after it, in order.
func TestLineWriterBatchesLinesThatArriveDuringAWrite(t *testing.T) {
	g := &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
	l := newLineWriter(g)
	if _, err := l.Write([]byte("idle\n")); err != nil {
		t.Fatal(err)
	}
	if got := g.all(); len(got) != 1 || got[0] != "idle\n" {
		t.Fatalf("after an idle Write: %q, want the line written at once", got)
	}

	g.mu.Lock()
	g.gated = true
	g.mu.Unlock()
	first := make(chan error, 1)
	go func() {
		_, err := l.Write([]byte("first\n"))
		first <- err
	}()
	<-g.entered // the first line's write is under way
	var want strings.Builder
	line := []byte("queued 0\n")
	for i := range 50 {
		line[7] = byte('0' + i%10)
		if _, err := l.Write(line); err != nil { // queued: returns at once
			t.Fatal(err)
		}
		want.Write(line) // the caller's buffer is reused: the queue copied it
	}
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	l.flush()
	got := g.all()
	if len(got) != 3 || got[1] != "first\n" || got[2] != want.String() {
		t.Fatalf("writes = %q, want idle, first, then the 50 queued lines in one write", got)
	}
}

// Lines written from many goroutines at once all come out whole, each
// goroutine's in its order, by the time flush returns.
func TestLineWriterLosesAndSplitsNothing(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	l := newLineWriter(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return out.Write(p)
	}))
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(l, "w%d line %d %s\n", w, i, strings.Repeat("x", i%300))
			}
		})
	}
	wg.Wait()
	l.flush()
	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for _, s := range got {
		var w, i int
		var pad string
		if _, err := fmt.Sscanf(s, "w%d line %d %s", &w, &i, &pad); err != nil && i%300 != 0 {
			t.Fatalf("line %q is not whole: %v", s, err)
		}
		if i != next[w] || len(pad) != i%300 {
			t.Fatalf("line %q: want w%d line %d, whole", s, w, next[w])
		}
		next[w]++
	}
	if len(got) != writers*lines {
		t.Fatalf("%d lines written, want %d", len(got), writers*lines)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
