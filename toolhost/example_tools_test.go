package toolhost

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func args(kv ...string) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = json.RawMessage(kv[i+1])
	}
	return m
}

func TestEchoTool(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	echo := NewEchoTool()
	spec := echo.Spec()
	if spec.Name != "Echo" || !spec.Builtin || len(spec.Commands) != 1 || spec.Commands[0].Description == "" || spec.Commands[0].Example == "" {
		t.Fatalf("spec: %+v", spec)
	}
	tests := []struct {
		name string
		call Call
		want string
	}{
		{"no args", Call{RequestID: "r1"}, "echo from " + host + " (request r1)\nno arguments"},
		{"sorted, strings unquoted, other JSON compact",
			Call{RequestID: "r2", Args: args("message", `"hi there"`, "list", `[1, 2]`, "count", `3`)},
			"echo from " + host + " (request r2)\ncount: 3\nlist: [1,2]\nmessage: hi there"},
		{"context size only", Call{RequestID: "r3", Context: json.RawMessage(`{"a":1}`)},
			"echo from " + host + " (request r3)\nno arguments\n_vcpContext: 7 bytes"},
		{"zero delay", Call{RequestID: "r4", Args: args("delay", `"0s"`)},
			"echo from " + host + " (request r4)\ndelay: 0s"},
	}
	for _, tc := range tests {
		got, err := echo.Invoke(context.Background(), tc.call)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v\nwant %q", tc.name, got, err, tc.want)
		}
	}
}

func TestEchoToolErrors(t *testing.T) {
	echo := NewEchoTool()
	tests := []struct {
		args map[string]json.RawMessage
		want string
	}{
		{args("fail", `"disk on fire"`), "disk on fire"},
		{args("delay", `"soon"`), `delay "soon" is not a duration: write it like "5s" or "1m"`},
		{args("delay", `"-1s"`), `delay "-1s" is out of range: use 0s to 1h0m0s`},
		{args("delay", `7200`), `delay "7200" is out of range: use 0s to 1h0m0s`},
	}
	for _, tc := range tests {
		_, err := echo.Invoke(context.Background(), Call{RequestID: "r", Args: tc.args})
		if err == nil || err.Error() != tc.want {
			t.Errorf("args %s: err %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestEchoDelayStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := NewEchoTool().Invoke(ctx, Call{RequestID: "r", Args: args("delay", `"50m"`)})
		done <- err
	}()
	cancel(ErrCancelled)
	select {
	case err := <-done:
		if !errors.Is(err, ErrCancelled) {
			t.Fatalf("err = %v, want it to wrap the cancel cause", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Echo kept waiting after its context was cancelled")
	}
}

func TestEchoThroughDispatcherTimesOut(t *testing.T) {
	pol := Policy{ExposedTools: []string{"Echo"}, Tools: map[string]ToolOverride{"Echo": {Timeout: 200 * time.Millisecond}}}
	d := newTestDispatcher(t, pol, Limits{}, NewEchoTool())
	r := newReplies()
	if !d.Dispatch(context.Background(), "Echo", Call{RequestID: "r1", Args: args("delay", `"1m"`)}, r.reply) {
		t.Fatal("refused")
	}
	wantErr(t, r.next(t), "r1", `tool "Echo" timed out after 0.18s on the node`, ErrTimeout)
	if !d.Dispatch(context.Background(), "Echo", Call{RequestID: "r2", Args: args("fail", `"42"`)}, r.reply) {
		t.Fatal("refused")
	}
	wantErr(t, r.next(t), "r2", "tool error: 42", nil)
}

func TestSystemInfoTool(t *testing.T) {
	tool := NewSystemInfoTool(time.Now().Add(-90 * time.Minute))
	if s := tool.Spec(); s.Name != "NodeInfo" || !s.Builtin || s.Timeout != 10*time.Second {
		t.Fatalf("spec: %+v", s)
	}
	v, err := tool.Invoke(context.Background(), Call{RequestID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := encodeResult("NodeInfo", v, 0, OversizeError)
	if err != nil {
		t.Fatal(err)
	}
	var got NodeInfo
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if got.Hostname != host || got.OS != runtime.GOOS || got.Arch != runtime.GOARCH || got.GoVersion != runtime.Version() ||
		got.PID != os.Getpid() || got.CPUs != runtime.NumCPU() || got.UptimeSeconds < 90*60 || got.UptimeSeconds > 91*60 {
		t.Fatalf("info: %+v", got)
	}
	if len(got.Content) != 1 || got.Content[0].Type != "text" {
		t.Fatalf("content: %+v", got.Content)
	}
	text := got.Content[0].Text
	for _, want := range []string{"host: " + host, runtime.GOOS + "/" + runtime.GOARCH, runtime.Version(), "up 1h30m"} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}
}
