package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/wsproto"
)

func TestTaskIDOf(t *testing.T) {
	for result, want := range map[string]string{
		`{"taskId":"abc","status":"accepted"}`: "abc",
		`{"taskId":12}`:                        "12",
		`{"taskId":null}`:                      "",
		`{"status":"done"}`:                    "",
		`"taskId"`:                             "",
		`[{"taskId":"x"}]`:                     "",
		``:                                     "",
		`{"taskId":`:                           "",
	} {
		if got := taskIDOf(json.RawMessage(result)); got != want {
			t.Errorf("taskIDOf(%s) = %q, want %q", result, got, want)
		}
	}
}

// offeredVideoGen is a client connected to conn whose server offered
// one tool, VideoGen.
func offeredVideoGen(t *testing.T) (*Client, *fakeConn) {
	t.Helper()
	c := New(Options{Log: zerolog.Nop(), ListWait: time.Hour})
	t.Cleanup(c.Close)
	conn := newFakeConn()
	c.Connected(conn.send)
	ask := conn.next(t).(wsproto.GetVCPManifests)
	c.Handle(wsproto.VCPManifestResponse{RequestID: ask.RequestID, Plugins: []wsproto.VCPPlugin{{Name: "VideoGen"}}})
	if !pollState(c, StateOffered) {
		t.Fatal("the list was never taken")
	}
	return c, conn
}

// TestResultLostEndsTheCall: a result the session refused unhandled ends
// the call waiting on it at once with ErrResultLost, whether it was the
// call's answer or its task's final result; another id changes nothing.
func TestResultLostEndsTheCall(t *testing.T) {
	c, conn := offeredVideoGen(t)
	call := func() (chan error, wsproto.ExecuteVCPTool) {
		done := make(chan error, 1)
		go func() {
			_, err := c.Call(context.Background(), "VideoGen", nil, func(Progress) {})
			done <- err
		}()
		return done, conn.next(t).(wsproto.ExecuteVCPTool)
	}
	ended := func(done chan error) error {
		t.Helper()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("the call did not end")
			return nil
		}
	}

	done, req := call()
	c.ResultLost("call-nobody-made")
	c.ResultLost(req.RequestID)
	if err := ended(done); !errors.Is(err, ErrResultLost) || !strings.Contains(err.Error(), "VideoGen") {
		t.Fatalf("the call's answer lost: %v, want ErrResultLost naming the tool", err)
	}

	done, req = call()
	c.Handle(wsproto.VCPToolResult{RequestID: req.RequestID, Status: wsproto.StatusSuccess, Result: []byte(`{"taskId":"t9"}`)})
	c.ResultLost(req.RequestID) // the answer came: the call now waits on its task
	select {
	case err := <-done:
		t.Fatalf("a lost frame under the answered call's id ended it: %v", err)
	default:
	}
	c.ResultLost("t9")
	if err := ended(done); !errors.Is(err, ErrResultLost) {
		t.Fatalf("the task's final result lost: %v, want ErrResultLost", err)
	}
}

// TestStatusLostReachesTheTasksCaller: progress frames the session refused
// unhandled are counted for the call following its task, and told before
// its next event and before its result; a call without a task is not.
func TestStatusLostReachesTheTasksCaller(t *testing.T) {
	c, conn := offeredVideoGen(t)
	progress := make(chan Progress, 16)
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "VideoGen", nil, func(p Progress) { progress <- p })
		done <- err
	}()
	call := conn.next(t).(wsproto.ExecuteVCPTool)
	c.StatusLost() // before the task: no call follows one yet
	c.Handle(wsproto.VCPToolResult{RequestID: call.RequestID, Status: wsproto.StatusSuccess, Result: []byte(`{"taskId":"t1"}`)})
	next := func() Progress {
		t.Helper()
		select {
		case p := <-progress:
			return p
		case <-time.After(10 * time.Second):
			t.Fatal("no progress")
			return Progress{}
		}
	}
	if p := next(); p.Kind != "accepted" {
		t.Fatalf("first progress %+v", p)
	}
	c.StatusLost()
	c.StatusLost()
	c.Handle(wsproto.VCPToolStatus{TaskID: "t1", BridgeType: "log", Data: []byte(`{"content":"x"}`)})
	if p := next(); p.Kind != KindDropped || p.Dropped != 2 || p.TaskID != "t1" {
		t.Fatalf("after two lost frames: %+v, want a count of 2", p)
	}
	if p := next(); p.Kind != "log" {
		t.Fatalf("the event itself: %+v", p)
	}
	c.StatusLost()
	c.Handle(wsproto.VCPToolResult{RequestID: "t1", Status: wsproto.StatusSuccess, Result: []byte(`"done"`)})
	if p := next(); p.Kind != KindDropped || p.Dropped != 1 {
		t.Fatalf("before the result: %+v, want a count of 1", p)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-progress:
		t.Fatalf("progress after the result: %+v", p)
	default:
	}
}
