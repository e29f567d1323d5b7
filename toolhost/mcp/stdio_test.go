//go:build unix

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestStdioServerListedAsOneTool(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("basic", "basic"))
	spec := f.tool("McpBasic").Spec()
	if spec.Source != "mcp:basic" || spec.DisplayName != "MCP Test Server" || spec.Version != "1.2.3" || !spec.DistributedExposed {
		t.Errorf("spec = %+v", spec)
	}
	if spec.Description != `A tool of the MCP server "Test Server".` {
		t.Errorf("description = %q", spec.Description)
	}
	var names []string
	for _, c := range spec.Commands {
		names = append(names, c.Command)
		if c.Schema == nil || c.Description != "" {
			t.Errorf("command %s: schema %v, description %q; want a schema and no hand-made description", c.Command, c.Schema, c.Description)
		}
	}
	want := []string{"big", "crash", "echo", "fail", "grow", "odd", "picture", "resources", "slow"} // the SDK server sorts them
	if !slices.Equal(names, want) {
		t.Errorf("commands = %v, want %v (the invalid schema left out)", names, want)
	}
	echo := spec.Commands[2].Schema
	if len(echo.Params) != 3 || echo.Params[0].Name != "msg" || !echo.Params[0].Required ||
		echo.Params[0].Description != "what to say" || echo.Params[1].Name != "count" || echo.Params[1].Type != schema.TypeInteger ||
		string(echo.Params[1].Default) != "1" || echo.Params[2].Type != schema.TypeBoolean {
		t.Errorf("echo params = %+v", echo.Params)
	}
	var raw map[string]any
	if err := json.Unmarshal(echo.Raw, &raw); err != nil || raw["description"] != "Echoes its arguments as JSON." {
		t.Errorf("raw schema = %s (%v): the tool's description belongs in it", echo.Raw, err)
	}
	st := f.status("basic")
	if st.State != StateRunning || st.Tools != 9 || st.Transport != "stdio" {
		t.Errorf("status = %+v", st)
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], `tool "broken" left out: invalid JSON Schema`) {
		t.Errorf("warnings = %q", st.Warnings)
	}
}

func TestStdioCallMapsArguments(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("basic", "basic"))
	ctx := context.Background()
	tool := f.tool("McpBasic")

	got, err := call(ctx, t, tool, map[string]any{"command": "echo", "msg": "hi", "count": 2, "maid": "Nova", "river_context": []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	var sent map[string]any
	if err := json.Unmarshal([]byte(resultText(t, got)), &sent); err != nil {
		t.Fatalf("echo: %v", err)
	}
	if len(sent) != 2 || sent["msg"] != "hi" || sent["count"] != 2.0 {
		t.Errorf("the server received %v; want msg and count only (command and the server's injected keys stripped)", sent)
	}

	odd := f.tool("McpBasic").Spec().Commands[5].Schema
	if odd.Params[0].Alias != "file_path" || odd.Params[1].Alias != "command_" {
		t.Fatalf("aliases = %+v", odd.Params)
	}
	got, err = call(ctx, t, tool, map[string]any{"command": "odd", "file_path": "/srv/a", "command_": "go"})
	if err != nil {
		t.Fatal(err)
	}
	if s := resultText(t, got); s != `{"command":"go","file-path":"/srv/a"}` {
		t.Errorf("odd received %s; want the original names back", s)
	}

	if _, err := call(ctx, t, tool, map[string]any{"msg": "no command"}); err == nil ||
		!strings.Contains(err.Error(), "command:「始」NAME「末」") || !strings.Contains(err.Error(), "big, crash, echo") {
		t.Errorf("no command: %v", err)
	}
	if _, err := call(ctx, t, tool, map[string]any{"command": "nope"}); err == nil ||
		!strings.Contains(err.Error(), `offers no tool "nope"`) {
		t.Errorf("unknown command: %v", err)
	}
}

func TestStdioResultShapes(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("basic", "basic"))
	ctx := context.Background()
	tool := f.tool("McpBasic")

	got, err := call(ctx, t, tool, map[string]any{"command": "picture"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if !strings.Contains(string(b), `{"type":"text","text":"a dot"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo`) {
		t.Errorf("picture = %s", b)
	}

	got, err = call(ctx, t, tool, map[string]any{"command": "resources"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(got)
	want := `{"content":[{"type":"text","text":"resource: file:///srv/notes/a.md (a.md, text/markdown)"},` +
		`{"type":"text","text":"resource file:///srv/notes/b.md:\ninline text"}],"structuredContent":{"count":2}}`
	if string(b) != want {
		t.Errorf("resources =\n%s\nwant\n%s", b, want)
	}

	if _, err := call(ctx, t, tool, map[string]any{"command": "fail"}); err == nil || err.Error() != "disk full" {
		t.Errorf("isError: %v; want the server's text as the error", err)
	}
}

func TestStdioCancelSendsCancellation(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("basic", "basic"))
	tool := f.tool("McpBasic")
	f.cancelSlowCall("basic", tool)
	if _, err := call(context.Background(), t, tool, map[string]any{"command": "echo", "msg": "still here"}); err != nil {
		t.Errorf("after a cancel: %v", err)
	}
}

func TestStdioDeadlineThroughDispatcher(t *testing.T) {
	f := newFixture(t)
	cfg := f.stdio("basic", "basic")
	cfg.Timeout = 2 * time.Second
	f.start(cfg)
	reg := toolhost.NewRegistry()
	if err := reg.Add(f.tool("McpBasic")); err != nil {
		t.Fatal(err)
	}
	d := toolhost.NewDispatcher(reg, toolhost.Policy{}, toolhost.Limits{}, f.host.o.Log)
	out := make(chan toolhost.Outcome, 1)
	args := map[string]json.RawMessage{"command": json.RawMessage(`"slow"`)}
	d.Dispatch(context.Background(), "McpBasic", toolhost.Call{RequestID: "d1", Args: args, Local: true}, func(o toolhost.Outcome) { out <- o })
	select {
	case o := <-out:
		if !errors.Is(o.Cause, toolhost.ErrTimeout) {
			t.Errorf("outcome = %+v", o)
		}
	case <-time.After(waitLimit):
		t.Fatal("no outcome")
	}
	f.waitMarker("basic", "cancelled")
}

func TestStdioCrashMidCallRestarts(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("basic", "basic"))
	tool := f.tool("McpBasic")
	first := f.pid("basic")
	_, err := call(context.Background(), t, tool, map[string]any{"command": "crash"})
	if err == nil || !strings.Contains(err.Error(), "MCP server basic stopped during the call: exit status 3: panic: crashing on purpose") {
		t.Fatalf("crash: %v", err)
	}
	testwait.For(t, "a restart", func() bool {
		st := f.status("basic")
		return st.State == StateRunning && st.Restarts >= 1
	})
	if pid := f.pid("basic"); pid == first || alive(first) {
		t.Errorf("pid %d after a crash of %d (alive: %v)", pid, first, alive(first))
	}
	// The Tool registered before the crash reaches the new process.
	if _, err := call(context.Background(), t, tool, map[string]any{"command": "echo", "msg": "back"}); err != nil {
		t.Errorf("after the restart: %v", err)
	}
}

// A server that comes back with another tool list is shown running only
// with that list: status never pairs the new session with the old count.
func TestStdioRestartShowsTheNewToolList(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("basic", "basic"))
	tool := f.tool("McpBasic")
	before := f.status("basic").Tools
	if _, err := call(context.Background(), t, tool, map[string]any{"command": "grow"}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the grown list", func() bool { return f.status("basic").Tools == before+1 })
	if _, err := call(context.Background(), t, tool, map[string]any{"command": "crash"}); err == nil {
		t.Fatal("crash returned no error")
	}
	testwait.For(t, "a restart", func() bool {
		st := f.status("basic")
		return st.State == StateRunning && st.Restarts >= 1
	})
	if st := f.status("basic"); st.Tools != before {
		t.Errorf("running again with %d tools, want the new process's %d", st.Tools, before)
	}
}

func TestStdioNotRunningMessage(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFixture(t, func(o *Options) {
		// Hold the restart so the down state can be seen.
		o.Backoff = func(int) time.Duration { return time.Hour }
	})
	f.start(f.stdio("basic", "basic"), f.stdio("other", "basic"))
	tool := f.tool("McpBasic")
	if _, err := call(context.Background(), t, tool, map[string]any{"command": "crash"}); err == nil {
		t.Fatal("crash returned no error")
	}
	testwait.For(t, "the restart wait", func() bool { return f.status("basic").State == StateRestarting })
	_, err := call(context.Background(), t, tool, map[string]any{"command": "echo", "msg": "x"})
	if err == nil || err.Error() != "MCP server basic is not running (restarting: exit status 3: panic: crashing on purpose)" {
		t.Errorf("err = %v", err)
	}
	if _, err := call(context.Background(), t, f.tool("McpOther"), map[string]any{"command": "echo", "msg": "x"}); err != nil {
		t.Errorf("the other server is affected: %v", err)
	}
}

// TestStdioStartErrorQuotesTheErrorLine: a server that fails to start as
// npx fails is shown with npm's line saying what failed, not only npm's
// last line; a call of its tool, which was never listed, is told it is not
// running, with that reason.
func TestStdioStartErrorQuotesTheErrorLine(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Backoff = func(int) time.Duration { return time.Hour } })
	f.start(f.stdio("npmfail", "npmfail"))
	st := f.status("npmfail")
	if !strings.Contains(st.LastError, "exit status 1: npm error 404 Not Found - GET https://registry.npmjs.org/@vcpnode%2fno-such-server") ||
		!strings.Contains(st.LastError, "A complete log of this run") {
		t.Errorf("last error = %q", st.LastError)
	}
	spec, err := f.host.Missing("McpNpmfail")
	if err == nil || spec.Name != "McpNpmfail" || spec.Source != "mcp:npmfail" ||
		!strings.HasPrefix(err.Error(), "MCP server npmfail is not running (restarting: exit status 1: npm error 404 Not Found") {
		t.Errorf("Missing = %+v, %v", spec, err)
	}
	if _, err := f.host.Missing("McpOther"); err != nil {
		t.Errorf("a tool of no server is not missing: %v", err)
	}
}

func TestStdioServerThatDiesAtStart(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("dies", "dies"))
	st := f.status("dies")
	if st.State == StateRunning || !strings.Contains(st.LastError, "exit status 2: fatal: cannot open /nonexistent/db") {
		t.Errorf("status = %+v", st)
	}
	if len(f.host.Tools()) != 0 {
		t.Errorf("a server that never listed its tools makes a tool: %v", f.host.Tools())
	}
	testwait.For(t, "retries", func() bool { return f.status("dies").Restarts >= 2 })
}

func TestStdioServerThatNeverAnswersInitialize(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.InitTimeout = 500 * time.Millisecond })
	f.start(f.stdio("silent", "silent"))
	st := f.status("silent")
	if !strings.Contains(st.LastError, "no answer to initialize and tools/list within 500ms") {
		t.Errorf("status = %+v", st)
	}
	pid := f.pid("silent")
	testwait.For(t, "the silent process to be stopped", func() bool { return !alive(pid) })
}

func TestStdioGarbageOnStdoutIsSkipped(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("garbage", "garbage"))
	got, err := call(context.Background(), t, f.tool("McpGarbage"), map[string]any{"command": "noisy"})
	if err != nil {
		t.Fatal(err)
	}
	if s := resultText(t, got); s != "quiet answer" {
		t.Errorf("noisy = %q", s)
	}
	if st := f.status("garbage"); st.Restarts != 0 {
		t.Errorf("garbage restarted the server: %+v", st)
	}
}

func TestStdioOversizedResult(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxMessageBytes = 1 << 20 })
	f.start(f.stdio("basic", "basic"))
	tool := f.tool("McpBasic")
	_, err := call(context.Background(), t, tool, map[string]any{"command": "big"})
	if err == nil || !strings.Contains(err.Error(), "sent a message larger than the limit of 1048576 bytes on stdout") {
		t.Fatalf("big: %v", err)
	}
	testwait.For(t, "a restart", func() bool { st := f.status("basic"); return st.State == StateRunning && st.Restarts == 1 })
	if _, err := call(context.Background(), t, tool, map[string]any{"command": "echo", "msg": "fine"}); err != nil {
		t.Errorf("after the oversized result: %v", err)
	}
}

func TestStdioToolListChanged(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("basic", "basic"))
	<-f.changes // the first listing
	if _, err := call(context.Background(), t, f.tool("McpBasic"), map[string]any{"command": "grow"}); err != nil {
		t.Fatal(err)
	}
	select {
	case name := <-f.changes:
		if name != "basic" {
			t.Errorf("change from %q", name)
		}
	case <-time.After(waitLimit):
		t.Fatal("no change after the tool list changed")
	}
	tool := f.tool("McpBasic")
	if n := len(tool.Spec().Commands); n != 10 {
		t.Errorf("%d commands after the change", n)
	}
	got, err := call(context.Background(), t, tool, map[string]any{"command": "extra"})
	if err != nil || resultText(t, got) != "extra here" {
		t.Errorf("extra: %v %v", got, err)
	}
}

func TestApplyRestartsOnlyChangedServers(t *testing.T) {
	f := newFixture(t)
	a, b, c := f.stdio("a", "basic"), f.stdio("b", "basic"), f.stdio("c", "basic")
	f.start(a, b, c)
	pa, pb, pc := f.pid("a"), f.pid("b"), f.pid("c")
	a.Exclude = []string{"crash"}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := f.host.Apply(ctx, []ServerConfig{a, b}); err != nil {
		t.Fatal(err)
	}
	f.host.Wait(ctx)
	testwait.For(t, "a restarted", func() bool { return f.pid("a") != pa })
	if f.pid("b") != pb || !alive(pb) {
		t.Error("the unchanged server was restarted")
	}
	if alive(pc) || alive(pa) {
		t.Error("a removed or replaced server is still running")
	}
	if len(f.host.Status()) != 2 {
		t.Errorf("status = %+v", f.host.Status())
	}
	if err := f.host.Apply(ctx, []ServerConfig{a, a}); err == nil || !strings.Contains(err.Error(), "defined twice") {
		t.Errorf("a duplicate: %v", err)
	}
}

func TestCloseStopsCallsAndProcesses(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("basic", "basic"))
	pid := f.pid("basic")
	done := make(chan error, 1)
	go func() {
		_, err := call(context.Background(), t, f.tool("McpBasic"), map[string]any{"command": "slow"})
		done <- err
	}()
	f.waitMarker("basic", "started")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := f.host.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("the call in flight succeeded")
		}
	case <-time.After(waitLimit):
		t.Fatal("the call did not end with the host")
	}
	if alive(pid) {
		t.Error("the server process outlived Close")
	}
	if err := f.host.Apply(ctx, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("apply after close: %v", err)
	}
}
