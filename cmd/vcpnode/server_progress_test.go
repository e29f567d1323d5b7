package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// asyncBridge is a server whose VideoGen answers with a task, as an
// asynchronous VCP plugin does; started hears each call's task.
func asyncBridge(started chan<- string) *demohub.Bridge {
	var n atomic.Int32
	return &demohub.Bridge{
		Plugins: []demohub.BridgePlugin{{Name: "VideoGen", Description: "Makes videos, later.",
			InvocationCommands: []map[string]any{{"command": "submit", "description": "prompt (string, required)"}}}},
		Run: func(_ context.Context, _ string, _ map[string]json.RawMessage) (any, error) {
			task := fmt.Sprintf("task-%d", n.Add(1))
			started <- task
			return map[string]any{"status": "success", "taskId": task, "message": "submitted"}, nil
		},
	}
}

// progressSession is an MCP session to `vcpnode mcp` whose progress
// notifications arrive on the returned channel.
type progressSession func(t *testing.T, d *testDaemon, opts *sdk.ClientOptions) *sdk.ClientSession

// runAsyncServerToolOverMCP calls the async server tool with a progress
// token: the task's acceptance and each of its events reach the client
// as progress notifications in order, and the late final result ends the
// call. A second call's connection drops mid-task: a clear error, no hang.
func runAsyncServerToolOverMCP(t *testing.T, open progressSession) {
	started := make(chan string, 2)
	d := startDaemonHub(t, demohub.Options{Bridge: asyncBridge(started)}, "[bridge]\noffer = [\"VideoGen\"]\n")
	conn := d.accept()
	d.waitServerToolsN(1)
	progress := make(chan *sdk.ProgressNotificationParams, 16)
	cs := open(t, d, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		progress <- r.Params
	}})
	call := func() <-chan *sdk.CallToolResult {
		done := make(chan *sdk.CallToolResult, 1)
		go func() {
			p := &sdk.CallToolParams{Name: "vcp_VideoGen", Arguments: map[string]any{"prompt": "sunset"}}
			p.SetProgressToken("tok-1")
			res, err := cs.CallTool(d.ctx, p)
			if err != nil {
				res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "call error: " + err.Error()}}}
			}
			done <- res
		}()
		return done
	}
	next := func(want string, n float64) {
		t.Helper()
		select {
		case p := <-progress:
			if p.Message != want || p.Progress != n || p.ProgressToken != "tok-1" {
				t.Fatalf("progress %v: %q (token %v), want %v: %q", p.Progress, p.Message, p.ProgressToken, n, want)
			}
		case <-d.ctx.Done():
			t.Fatalf("no progress notification %q", want)
		}
	}
	await := func(ch <-chan string) string {
		t.Helper()
		select {
		case s := <-ch:
			return s
		case <-d.ctx.Done():
			t.Fatal("the server never ran the tool")
			return ""
		}
	}

	done := call()
	task := await(started)
	next("the server started task "+task+": submitted", 1)
	if err := d.hub.BridgeStatus(d.ctx, task, "log", map[string]any{"status": "running", "content": "50% rendered"}); err != nil {
		t.Fatal(err)
	}
	next("50% rendered", 2)
	if err := d.hub.BridgeStatus(d.ctx, task, "info", map[string]any{"status": "almost"}); err != nil {
		t.Fatal(err)
	}
	next("almost", 3)
	select {
	case res := <-done:
		t.Fatalf("the call ended before the task's result: %+v", res)
	default:
	}
	if err := d.hub.BridgeCallback(d.ctx, task, map[string]any{"content": []map[string]any{{"type": "text", "text": "video at /v/" + task + ".mp4"}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res.IsError || callText(t, res) != "video at /v/"+task+".mp4" {
			t.Fatalf("final result = %+v %q", res, callText(t, res))
		}
	case <-d.ctx.Done():
		t.Fatal("the task's final result never ended the call")
	}

	// A tool not offered is refused as without progress.
	p := &sdk.CallToolParams{Name: "vcp_Nope", Arguments: map[string]any{}}
	p.SetProgressToken("tok-2")
	if res, err := cs.CallTool(d.ctx, p); err == nil && (!res.IsError || !strings.Contains(callText(t, res), "not offered to MCP clients")) {
		t.Fatalf("a tool not offered, with progress = %+v %q", res, callText(t, res))
	}

	// The connection drops while the second task runs.
	done = call()
	await(started)
	next("the server started task task-2: submitted", 1)
	conn.Drop()
	select {
	case res := <-done:
		if !res.IsError || !strings.Contains(callText(t, res), "the connection to the VCP server dropped while the call ran") {
			t.Fatalf("call across a drop = %+v %q", res, callText(t, res))
		}
	case <-d.ctx.Done():
		t.Fatal("a call across a dropped connection hung")
	}
}

func TestMCPAsyncServerToolProgressStdio(t *testing.T) {
	runAsyncServerToolOverMCP(t, func(t *testing.T, d *testDaemon, opts *sdk.ClientOptions) *sdk.ClientSession {
		return mcpSessionWith(t, d, opts, 0)
	})
}

func TestMCPAsyncServerToolProgressHTTP(t *testing.T) {
	runAsyncServerToolOverMCP(t, func(t *testing.T, d *testDaemon, opts *sdk.ClientOptions) *sdk.ClientSession {
		_, cs, stop := mcpHTTPSessionWith(t, d, opts)
		t.Cleanup(stop)
		return cs
	})
}

// TestManyProgressEventsDroppedWithACount: a server sending thousands of
// progress events to a caller that reads none of them for a while loses
// some, and the caller is told how many: each progress event the server
// sent is either delivered or counted in a "dropped" line, the last
// progress line is that count, the final result still ends the call, and
// the daemon's log says it too.
func TestManyProgressEventsDroppedWithACount(t *testing.T) {
	const events = 3000
	started := make(chan string, 1)
	d := startDaemonHub(t, demohub.Options{Bridge: asyncBridge(started)}, "")
	d.accept()
	d.waitServerToolsN(1)
	c := controlapi.NewControlClient(d.socket)
	defer c.Close()

	accepted, release := make(chan struct{}), make(chan struct{})
	var got []controlapi.CallProgress
	type answer struct {
		res controlapi.CallResponse
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := c.CallWithProgress(d.ctx, controlapi.CallRequest{Tool: "vcp_VideoGen", Args: map[string]json.RawMessage{"prompt": json.RawMessage(`"x"`)}},
			func(p controlapi.CallProgress) {
				if len(got) == 0 {
					close(accepted) // the server has the task
					<-release       // a caller busy with the first event reads nothing more
				}
				got = append(got, p)
			})
		done <- answer{res, err}
	}()
	var task string
	select {
	case task = <-started:
	case <-d.ctx.Done():
		t.Fatal("the server never ran the tool")
	}
	select {
	case <-accepted:
	case <-d.ctx.Done():
		t.Fatal("the task was never accepted")
	}
	text := strings.Repeat("r", 100)
	for i := range events {
		if err := d.hub.BridgeStatus(d.ctx, task, "log", map[string]any{"content": fmt.Sprintf("step %d %s", i, text)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.hub.BridgeCallback(d.ctx, task, map[string]any{"content": []map[string]any{{"type": "text", "text": "done"}}}); err != nil {
		t.Fatal(err)
	}
	// The daemon has every event once the call is no longer in flight.
	if !testwait.Poll(d.ctx, func() bool {
		st, err := c.Status(d.ctx)
		return err == nil && len(st.InFlight) == 0
	}) {
		t.Fatal("the call never ended in the daemon")
	}
	close(release)
	var a answer
	select {
	case a = <-done:
	case <-d.ctx.Done():
		t.Fatal("the call never answered")
	}
	if a.err != nil || !a.res.OK || !strings.Contains(string(a.res.Result), `"done"`) {
		t.Fatalf("call = %+v %v", a.res, a.err)
	}
	delivered, dropped := 0, 0
	for _, p := range got {
		if p.Kind == controlapi.ProgressDropped {
			dropped += p.Dropped
			if !strings.Contains(p.Message, fmt.Sprintf("%d progress updates dropped", p.Dropped)) {
				t.Errorf("dropped line says %q", p.Message)
			}
			continue
		}
		delivered++
	}
	if delivered+dropped != events+1 { // and the task's acceptance
		t.Fatalf("%d delivered + %d counted as dropped, want the %d sent", delivered, dropped, events+1)
	}
	t.Logf("%d delivered, %d dropped", delivered, dropped)
	if dropped == 0 {
		t.Fatalf("nothing was dropped of %d events to a stalled reader; the test shows nothing", events)
	}
	if last := got[len(got)-1]; last.Kind != controlapi.ProgressDropped {
		t.Errorf("the last progress line is %+v, want the count of those dropped", last)
	}
	if !testwait.Poll(d.ctx, func() bool {
		return strings.Contains(d.logs.String(), "progress events of a call were dropped")
	}) {
		t.Errorf("the log does not say progress events were dropped:\n%s", logTail(d.logs.String()))
	}
}

// logTail is the end of a long log, for a failure message.
func logTail(s string) string {
	if len(s) > 4000 {
		return s[len(s)-4000:]
	}
	return s
}

// TestMCPProgressMovesPastDroppedEvents: a daemon's count of dropped
// progress events reaches an MCP client as a notification with the count
// in its words, and the progress value moves on by the count, so it still
// counts the server's events.
func TestMCPProgressMovesPastDroppedEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	lines := []controlapi.CallStreamLine{
		{Progress: &controlapi.CallProgress{TaskID: "t1", Kind: "accepted", Message: "the server started task t1"}},
		{Progress: &controlapi.CallProgress{TaskID: "t1", Kind: controlapi.ProgressDropped, Dropped: 5, Message: "5 progress updates dropped"}},
		{Progress: &controlapi.CallProgress{TaskID: "t1", Kind: "log", Message: "90% rendered"}},
		{Response: &controlapi.CallResponse{Tool: "vcp_VideoGen", OK: true, Result: json.RawMessage(`"done"`)}},
	}
	sock := fakeControlSocket(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case controlapi.PathMCPTools:
			_ = json.NewEncoder(w).Encode(controlapi.MCPToolsResponse{Tools: []controlapi.MCPTool{{Name: "vcp_VideoGen",
				Description: "Makes videos.", InputSchema: json.RawMessage(`{"type":"object"}`)}}})
		case controlapi.PathCall:
			w.Header().Set("Content-Type", "application/x-ndjson")
			enc := json.NewEncoder(w)
			for _, l := range lines {
				_ = enc.Encode(l)
			}
		default:
			http.NotFound(w, r)
		}
	})

	var mu sync.Mutex
	var got []*sdk.ProgressNotificationParams
	cs := mcpSessionWith(t, &testDaemon{t: t, ctx: ctx, socket: sock}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, r.Params)
			mu.Unlock()
		}}, 0)
	p := &sdk.CallToolParams{Name: "vcp_VideoGen", Arguments: map[string]any{}}
	p.SetProgressToken("tok")
	res, err := cs.CallTool(ctx, p)
	if err != nil || res.IsError {
		t.Fatalf("call = %+v %v", res, err)
	}
	want := []struct {
		n   float64
		msg string
	}{{1, "the server started task t1"}, {6, "5 progress updates dropped"}, {7, "90% rendered"}}
	if !testwait.Poll(ctx, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= len(want) }) {
		t.Fatal("not every progress notification came")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, w := range want {
		if got[i].Progress != w.n || got[i].Message != w.msg {
			t.Errorf("notification %d = %v %q, want %v %q", i, got[i].Progress, got[i].Message, w.n, w.msg)
		}
	}
}
