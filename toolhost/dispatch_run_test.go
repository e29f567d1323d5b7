package toolhost

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

func TestDispatchDeadline(t *testing.T) {
	// T = 2s: margin min(3s, T/10) = 200ms, so the node gives up at 1.8s.
	// The tool must be entered before that (the tests wait for it), and a
	// loaded machine can stall a goroutine for a good part of a second;
	// the subtests run in parallel so that their waits overlap.
	const (
		timeout = 2 * time.Second
		want    = `tool "Slow" timed out after 1.8s on the node`
	)

	t.Run("running tool honours its context", func(t *testing.T) {
		t.Parallel()
		tool := newGateTool("Slow")
		tool.spec.Timeout = timeout
		d := newTestDispatcher(t, Policy{}, Limits{}, tool)
		r := newReplies()
		start := time.Now()
		dispatch(t, d, "Slow", "r1", r)
		g := tool.next(t)
		o := r.next(t)
		wantErr(t, o, "r1", want, ErrTimeout)
		if el := time.Since(start); el < timeout*9/10 {
			t.Fatalf("timed out after %v, before the 1.8s deadline", el)
		}
		if !errors.Is(context.Cause(g.ctx), ErrTimeout) {
			t.Fatalf("tool context cause %v", context.Cause(g.ctx))
		}
	})

	t.Run("policy override sets the timeout", func(t *testing.T) {
		t.Parallel()
		tool := newGateTool("Slow")
		pol := Policy{Tools: map[string]ToolOverride{"Slow": {Timeout: timeout}}}
		d := newTestDispatcher(t, pol, Limits{}, tool)
		r := newReplies()
		dispatch(t, d, "Slow", "r1", r)
		tool.next(t)
		wantErr(t, r.next(t), "r1", want, ErrTimeout)
	})

	t.Run("time in the queue counts", func(t *testing.T) {
		t.Parallel()
		blocker, slow := newGateTool("Blocker"), newGateTool("Slow")
		slow.spec.Timeout = timeout
		d := newTestDispatcher(t, Policy{}, Limits{MaxConcurrent: 1}, blocker, slow)
		r := newReplies()
		dispatch(t, d, "Blocker", "b1", r)
		gb := blocker.next(t)
		dispatch(t, d, "Slow", "r1", r) // never gets the slot
		wantErr(t, r.next(t), "r1", want, ErrTimeout)
		slow.noneEntered(t)
		gb.finish("done", nil)
		wantText(t, r.next(t), "b1", "done")
	})

	t.Run("tool ignoring its context is answered anyway", func(t *testing.T) {
		t.Parallel()
		tool := newGateTool("Slow")
		tool.spec.Timeout = timeout
		tool.ignoreCtx = true
		d := newTestDispatcher(t, Policy{}, Limits{MaxConcurrent: 1}, tool)
		r := newReplies()
		dispatch(t, d, "Slow", "r1", r)
		g := tool.next(t)
		wantErr(t, r.next(t), "r1", want, ErrTimeout)
		// The stuck tool still holds its slot, and shows in status.
		if calls := d.InFlight(); len(calls) != 1 || calls[0].Queued {
			t.Fatalf("InFlight = %+v, want the stuck call running", calls)
		}
		dispatch(t, d, "Slow", "r2", r)
		tool.noneEntered(t)
		g.finish("too late", nil)
		g2 := tool.next(t) // the slot came back
		g2.finish("ok", nil)
		o := r.next(t)
		if o.RequestID != "r2" {
			t.Fatalf("got %+v", o)
		}
		r.none(t) // the abandoned call was answered once only
	})
}

func TestDispatchToolOutcomes(t *testing.T) {
	bigText := strings.Repeat("x", 200)
	tests := []struct {
		name    string
		fn      func(context.Context, Call) (any, error)
		result  string // exact JSON, when success
		err     string // exact error text, when failure
		errKind error
	}{
		{name: "string becomes text content",
			fn:     func(context.Context, Call) (any, error) { return "hello", nil },
			result: `{"content":[{"type":"text","text":"hello"}]}`},
		{name: "markup is not HTML-escaped",
			fn:     func(context.Context, Call) (any, error) { return "<<<[END]>>> & more", nil },
			result: `{"content":[{"type":"text","text":"<<<[END]>>> & more"}]}`},
		{name: "raw JSON passes through",
			fn:     func(context.Context, Call) (any, error) { return json.RawMessage(` {"a":[1,2]} `), nil },
			result: `{"a":[1,2]}`},
		{name: "struct is marshalled",
			fn: func(context.Context, Call) (any, error) {
				return struct {
					Status string `json:"status"`
					N      int    `json:"n"`
				}{"success", 3}, nil
			},
			result: `{"status":"success","n":3}`},
		{name: "nil result says so",
			fn:     func(context.Context, Call) (any, error) { return nil, nil },
			result: `{"content":[{"type":"text","text":"tool \"T\" finished with no output"}]}`},
		{name: "typed nil says so too",
			fn:     func(context.Context, Call) (any, error) { return (*struct{ A int })(nil), nil },
			result: `{"content":[{"type":"text","text":"tool \"T\" finished with no output"}]}`},
		{name: "empty raw output says so too",
			fn:     func(context.Context, Call) (any, error) { return json.RawMessage(" "), nil },
			result: `{"content":[{"type":"text","text":"tool \"T\" finished with no output"}]}`},
		{name: "invalid raw JSON",
			fn:      func(context.Context, Call) (any, error) { return json.RawMessage(`{"a":`), nil },
			err:     "tool returned a result that is not valid JSON: 5 bytes of raw output that do not parse",
			errKind: ErrBadResult},
		{name: "unmarshallable value",
			fn:      func(context.Context, Call) (any, error) { return func() {}, nil },
			err:     "tool returned a result that is not valid JSON: json: unsupported type: func()",
			errKind: ErrBadResult},
		{name: "result over the cap",
			fn:      func(context.Context, Call) (any, error) { return bigText, nil },
			err:     "result of 239 bytes exceeds max_result_bytes (100)",
			errKind: ErrResultTooLarge},
		{name: "tool error text",
			fn:  func(context.Context, Call) (any, error) { return nil, errors.New("GPU out of memory") },
			err: "GPU out of memory"},
		{name: "numeric error is not a JSON scalar",
			fn:  func(context.Context, Call) (any, error) { return nil, errors.New("123") },
			err: "tool error: 123"},
		{name: "object error passes through",
			fn:  func(context.Context, Call) (any, error) { return nil, errors.New(`{"code":500}`) },
			err: `{"code":500}`},
		{name: "empty error",
			fn:  func(context.Context, Call) (any, error) { return nil, errors.New("") },
			err: "tool failed without an error message"},
		{name: "long error is cut",
			fn:  func(context.Context, Call) (any, error) { return nil, errors.New(bigText) },
			err: strings.Repeat("x", 100-len(truncatedMark)) + truncatedMark},
		{name: "panic",
			fn:      func(context.Context, Call) (any, error) { panic("kaboom") },
			err:     `tool "T" panicked: kaboom`,
			errKind: ErrToolPanic},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDispatcher(t, Policy{}, Limits{MaxResultBytes: 100}, newFuncTool("T", tc.fn))
			r := newReplies()
			dispatch(t, d, "T", "r1", r)
			o := r.next(t)
			if tc.err != "" {
				wantErr(t, o, "r1", tc.err, tc.errKind)
				return
			}
			if o.Err != "" || string(o.Result) != tc.result || o.Cause != nil {
				t.Fatalf("got result %s err %q, want %s", o.Result, o.Err, tc.result)
			}
		})
	}
}

func TestDispatchSurvivesPanic(t *testing.T) {
	calls := 0
	tool := newFuncTool("T", func(context.Context, Call) (any, error) {
		calls++ // calls run one at a time below
		if calls == 1 {
			panic(errors.New("first call explodes"))
		}
		return "fine", nil
	})
	d := newTestDispatcher(t, Policy{}, Limits{}, tool)
	r := newReplies()
	dispatch(t, d, "T", "r1", r)
	wantErr(t, r.next(t), "r1", `tool "T" panicked: first call explodes`, ErrToolPanic)
	dispatch(t, d, "T", "r2", r)
	wantText(t, r.next(t), "r2", "fine")
}

// caller returns a function that dispatches one call, from the owner
// (local) or the server, and waits for its outcome.
func caller(t *testing.T, d *Dispatcher) func(tool, id string, local bool) Outcome {
	r := newReplies()
	return func(tool, id string, local bool) Outcome {
		t.Helper()
		if !d.Dispatch(context.Background(), tool, Call{RequestID: id, Local: local}, r.reply) {
			t.Fatal("refused")
		}
		return r.next(t)
	}
}

func TestDispatchExposure(t *testing.T) {
	plugin := newFuncTool("Plugin", func(context.Context, Call) (any, error) { return "ran", nil })
	d := newTestDispatcher(t, Policy{}, Limits{}, plugin, NewEchoTool())
	call := caller(t, d)

	wantText(t, call("Plugin", "r1", false), "r1", "ran")
	// A built-in that the config does not name looks exactly like a missing tool.
	wantErr(t, call("Echo", "r2", false), "r2", `unknown tool "Echo"`, ErrUnknownTool)
	wantErr(t, call("Nope", "r3", false), "r3", `unknown tool "Nope"`, ErrUnknownTool)

	// The policy is re-read on every call.
	d.SetPolicy(Policy{HiddenTools: []string{"Plugin"}, ExposedTools: []string{"Echo"}})
	wantErr(t, call("Plugin", "r4", false), "r4", `unknown tool "Plugin"`, ErrUnknownTool)
	if o := call("Echo", "r5", false); o.Err != "" {
		t.Fatalf("Echo after SetPolicy: %+v", o)
	}
	// The owner's local calls skip exposure, not existence.
	wantText(t, call("Plugin", "r6", true), "r6", "ran")
	wantErr(t, call("Nope", "r7", true), "r7", `unknown tool "Nope"`, ErrUnknownTool)
}

// TestDispatchMissingToolSaysWhy: a tool that is not registered for now
// (its MCP server is restarting) answers why, to the owner and to the
// server when the policy would expose it; hidden, it stays unknown.
func TestDispatchMissingToolSaysWhy(t *testing.T) {
	d := newTestDispatcher(t, Policy{}, Limits{}, NewEchoTool())
	down := errors.New(`MCP server files is not running (restarting: exit status 1: npm error 404 Not Found)`)
	d.SetMissing(func(tool string) (Spec, error) {
		if tool != "McpFiles" {
			return Spec{}, nil
		}
		return Spec{Name: tool, Source: "mcp:files", DistributedExposed: true}, down
	})
	call := caller(t, d)
	wantErr(t, call("McpFiles", "r1", true), "r1", down.Error(), nil)
	wantErr(t, call("McpFiles", "r2", false), "r2", down.Error(), nil)
	wantErr(t, call("Nope", "r3", true), "r3", `unknown tool "Nope"`, ErrUnknownTool)
	d.SetPolicy(Policy{HiddenTools: []string{"McpFiles"}})
	wantErr(t, call("McpFiles", "r4", false), "r4", `unknown tool "McpFiles"`, ErrUnknownTool)
	wantErr(t, call("McpFiles", "r5", true), "r5", down.Error(), nil)
}

func TestSetPolicyCopiesItsInput(t *testing.T) {
	d := newTestDispatcher(t, Policy{}, Limits{}, NewEchoTool())
	pol := Policy{ExposedTools: []string{"Echo"}}
	d.SetPolicy(pol)
	pol.ExposedTools[0] = "Other"
	if got := d.Policy().ExposedTools; len(got) != 1 || got[0] != "Echo" {
		t.Fatalf("policy changed under the dispatcher: %v", got)
	}
}

func TestDispatchLogsOncePerCallWithoutArgValues(t *testing.T) {
	var logs testlog.Buffer
	d := newLoggedDispatcher(t, Policy{ExposedTools: []string{"Echo"}}, Limits{}, &logs, NewEchoTool())
	r := newReplies()
	args := map[string]json.RawMessage{"message": json.RawMessage(`"secret-argument-value"`)}
	if !d.Dispatch(context.Background(), "Echo", Call{RequestID: "r1", Args: args}, r.reply) {
		t.Fatal("refused")
	}
	if o := r.next(t); o.Err != "" || !strings.Contains(string(o.Result), "secret-argument-value") {
		t.Fatalf("echo: %+v", o)
	}
	dispatch(t, d, "Missing", "r2", r)
	r.next(t)
	// The log line is written before reply; the dispatcher is idle once both replied.
	if err := d.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	text := logs.String()
	if strings.Contains(text, "secret-argument-value") {
		t.Fatalf("argument value logged: %s", text)
	}
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["message"] == "call finished" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d 'call finished' lines, want 2: %s", len(lines), text)
	}
	first, second := lines[0], lines[1]
	if first["level"] != "info" || first["tool"] != "Echo" || first["request_id"] != "r1" ||
		first["outcome"] != "ok" || first["duration"] == nil {
		t.Fatalf("first line: %v", first)
	}
	if second["outcome"] != "unknown_tool" || second["error"] != `unknown tool "Missing"` {
		t.Fatalf("second line: %v", second)
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"disk full", "disk full"},
		{"123", "tool error: 123"},
		{"-1.5e3", "tool error: -1.5e3"},
		{`"quoted"`, `tool error: "quoted"`},
		{"true", "tool error: true"},
		{"null", "tool error: null"},
		{" false ", "tool error: false"},
		{"[1,2]", "tool error: [1,2]"},
		{`{"plugin_error":"x"}`, `{"plugin_error":"x"}`},
		{"", "tool failed without an error message"},
		{"  \n", "tool failed without an error message"},
		{"bad \xff byte", "bad \uFFFD byte"},
	}
	for _, tc := range tests {
		if got := errorText(tc.in, 0); got != tc.want {
			t.Errorf("errorText(%q) = %q, want %q", tc.in, got, tc.want)
		}
		got := errorText(tc.in, 0)
		var v any
		if json.Unmarshal([]byte(got), &v) == nil {
			if _, isObject := v.(map[string]any); !isObject {
				t.Errorf("errorText(%q) = %q is a bare JSON scalar or array", tc.in, got)
			}
		}
	}
}

func TestSecondsText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		180 * time.Millisecond:         "0.18s",
		57 * time.Second:               "57s",
		1500 * time.Millisecond:        "1.5s",
		(1<<31 - 1) * time.Millisecond: "2147483.647s",
	} {
		if got := secondsText(d); got != want {
			t.Errorf("secondsText(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestFinishedLineClipsWireValues: the tool name and request id a server
// sends go into the "call finished" line clipped, however long they are.
func TestFinishedLineClipsWireValues(t *testing.T) {
	logs := &testlog.Buffer{}
	d := newLoggedDispatcher(t, Policy{}, Limits{}, logs)
	long := strings.Repeat("x", 1<<20)
	r := newReplies()
	dispatch(t, d, long, long, r)
	if o := r.next(t); o.OK() {
		t.Fatalf("an unknown tool answered %v", o)
	}
	var line string
	testwait.For(t, "the call finished line", func() bool {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "call finished") {
				line = l
				return true
			}
		}
		return false
	})
	if len(line) > 2048 || !strings.Contains(line, "(1048576 bytes)") {
		t.Errorf("the call finished line is %d bytes, want the wire values clipped with their size: %.300s", len(line), line)
	}
}
