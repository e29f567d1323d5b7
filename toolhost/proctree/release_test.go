package proctree

import (
	"sync"
	"syscall"
	"testing"
)

// recordingBackend counts what reaches it; alive says populated throughout,
// like a pooled cgroup that another tree now uses.
type recordingBackend struct {
	mu                              sync.Mutex
	signals, kills, reaps, releases int
}

func (b *recordingBackend) sysProcAttr() *syscall.SysProcAttr { return nil }
func (b *recordingBackend) started(int)                       {}
func (b *recordingBackend) signal(syscall.Signal)             { b.mu.Lock(); b.signals++; b.mu.Unlock() }
func (b *recordingBackend) alive() bool                       { return true }
func (b *recordingBackend) killAll()                          { b.mu.Lock(); b.kills++; b.mu.Unlock() }
func (b *recordingBackend) reap()                             { b.mu.Lock(); b.reaps++; b.mu.Unlock() }
func (b *recordingBackend) release()                          { b.mu.Lock(); b.releases++; b.mu.Unlock() }

// A released tree's cgroup goes back to a pool and may hold the next
// tree's processes: a late KillAll or Signal through the old handle (a
// watchdog firing after the host was reaped, say) must not reach it. This
// killed a freshly started direct-plugin host mid-load.
func TestReleasedTreeNeverActsAgain(t *testing.T) {
	b := &recordingBackend{}
	tr := &Tree{b: b}
	tr.KillAll()
	tr.Signal(syscall.SIGTERM)
	if b.kills != 1 || b.signals != 1 || !tr.Alive() {
		t.Fatalf("before release: kills %d, signals %d, alive %t", b.kills, b.signals, tr.Alive())
	}
	tr.Release()
	tr.Release()
	tr.KillAll()
	tr.Signal(syscall.SIGKILL)
	if b.kills != 1 || b.signals != 1 || b.releases != 1 {
		t.Errorf("after release: kills %d, signals %d, releases %d; want 1, 1, 1", b.kills, b.signals, b.releases)
	}
	if tr.Alive() {
		t.Error("a released tree reports live processes (those of the cgroup's next user)")
	}
}
