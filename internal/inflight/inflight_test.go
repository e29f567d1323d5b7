package inflight

import "testing"

func closedNow(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestCloseWaitsForTheWorkInProgress(t *testing.T) {
	var c Counter
	if idle, n := c.Close(); idle != nil || n != 0 {
		t.Fatalf("Close of an idle counter = %v, %d; want nil, 0", idle, n)
	}
	if c.Begin() {
		t.Fatal("Begin after Close succeeded")
	}

	var d Counter
	if !d.Begin() || !d.Begin() {
		t.Fatal("Begin of an open counter failed")
	}
	idle, n := d.Close()
	if idle == nil || n != 2 || d.Count() != 2 {
		t.Fatalf("Close = %v, %d (Count %d); want a channel and 2", idle, n, d.Count())
	}
	if d.Begin() {
		t.Fatal("Begin after Close succeeded")
	}
	d.End()
	if closedNow(idle) {
		t.Fatal("idle closed with work still in progress")
	}
	again, n := d.Close()
	if again != idle || n != 1 {
		t.Fatalf("second Close = %v, %d; want the same channel and 1", again, n)
	}
	d.End()
	if !closedNow(idle) || d.Count() != 0 {
		t.Fatalf("idle not closed once the work ended (Count %d)", d.Count())
	}
}

func TestCloseIfIdleLeavesABusyCounterOpen(t *testing.T) {
	var c Counter
	c.Begin()
	idle, n := c.CloseIfIdle()
	if idle == nil || n != 1 {
		t.Fatalf("CloseIfIdle of a busy counter = %v, %d", idle, n)
	}
	if !c.Begin() {
		t.Fatal("a busy counter was closed")
	}
	c.End()
	c.End()
	if !closedNow(idle) {
		t.Fatal("idle not closed once the work ended")
	}
	if idle, n := c.CloseIfIdle(); idle != nil || n != 0 {
		t.Fatalf("CloseIfIdle of an idle counter = %v, %d", idle, n)
	}
	if c.Begin() {
		t.Fatal("Begin after CloseIfIdle of an idle counter succeeded")
	}
}
