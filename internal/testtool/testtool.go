// Package testtool holds tools for the tests of what runs calls: a call
// that blocks until the test lets it go, a typed tool, one of named
// commands and one described only by its call form. Only _test files import it
// (internal/archtest checks).
package testtool

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// Gate blocks every call until Release is closed or the call is
// cancelled, and reports both.
type Gate struct {
	Name      string
	Started   chan string   // each call's request id as it starts
	Release   chan struct{} // closed: every call answers "released <id>"
	Cancelled chan string   // each call's request id as it is cancelled
}

// NewGate makes the tool "Gate".
func NewGate() *Gate {
	return &Gate{Name: "Gate", Started: make(chan string, 64), Release: make(chan struct{}), Cancelled: make(chan string, 64)}
}

// Spec describes the gate as a built-in tool with a minute's timeout.
func (g *Gate) Spec() toolhost.Spec {
	return toolhost.Spec{Name: g.Name, Description: "blocks until the test releases it", Timeout: time.Minute, Builtin: true}
}

// Invoke blocks until the gate is released or ctx ends.
func (g *Gate) Invoke(ctx context.Context, call toolhost.Call) (any, error) {
	g.Started <- call.RequestID
	select {
	case <-g.Release:
		return "released " + call.RequestID, nil
	case <-ctx.Done():
		g.Cancelled <- call.RequestID
		return nil, ctx.Err()
	}
}

// WaitStarted waits for the next call to start and fails t unless its
// request id is want or ctx ends first.
func (g *Gate) WaitStarted(ctx context.Context, t testing.TB, want string) {
	t.Helper()
	select {
	case id := <-g.Started:
		if id != want {
			t.Fatalf("gate started %q, want %q", id, want)
		}
	case <-ctx.Done():
		t.Fatalf("gate call %q never started", want)
	}
}

// FirstText is the text of a result's first content part.
func FirstText(t testing.TB, res wsproto.ToolResult) string {
	t.Helper()
	var body struct {
		Content []struct{ Type, Text string }
	}
	if err := json.Unmarshal(res.Result, &body); err != nil || len(body.Content) == 0 {
		t.Fatalf("result %s has no content parts (%v)", res.Result, err)
	}
	return body.Content[0].Text
}

// WaitPending waits, on the broker's change channel, until n calls await
// approval, and returns them; it fails t when ctx ends first.
func WaitPending(ctx context.Context, t testing.TB, a *toolhost.Approvals, n int) []toolhost.PendingApproval {
	t.Helper()
	read := func() ([]toolhost.PendingApproval, <-chan struct{}) {
		changed := a.Changes() // before the read, so no change is missed
		return a.Pending(), changed
	}
	return testwait.Change(ctx, t, fmt.Sprintf("%d pending approvals", n), read,
		func(p []toolhost.PendingApproval) bool { return len(p) == n })
}
