//go:build unix

package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

func TestSyncPluginAnswers(t *testing.T) {
	root := pluginRoot(t, "Echo", "LogsFirst", "Pretty", "NoStdin")
	set := scan(t, newHost(t, Options{}), root)
	big := strings.Repeat("x", 1<<20) // more than a pipe buffer, for a plugin that never reads it
	cases := []struct {
		name   string
		plugin string
		args   map[string]string
		want   string // the result as the dispatcher would marshal it
	}{
		{"empty args are {}", "Echo", nil, `{"args":{}}`},
		{"args verbatim, no HTML escaping", "Echo", map[string]string{"text": "<b>&「始」", "n": "2"},
			`{"args":{"n":"2","text":"<b>&「始」"}}`},
		{"logs and status-less JSON before the answer", "LogsFirst", map[string]string{"text": "hi"},
			`{"content":[{"type":"text","text":"done: hi"}]}`},
		{"pretty-printed, pass-through fields merged", "Pretty", nil,
			`{"_specialAction":"create_canvas","canvas":{"height":1,"width":2},"messageForAI":"the canvas is ready","note":"nested {braces} inside a string","payload":{"id":"c1"}}`},
		{"stdin never read", "NoStdin", map[string]string{"big": big},
			`{"content":[{"type":"text","text":"ignored stdin"}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := call(context.Background(), findTool(t, set, c.plugin), c.args)
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			if got := normalizeJSON(t, asJSON(t, res)); got != normalizeJSON(t, c.want) {
				t.Errorf("result\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// normalizeJSON re-marshals s so key order does not matter.
func normalizeJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %s", s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSyncPluginErrors(t *testing.T) {
	root := pluginRoot(t, "FailJSON", "FailNoJSON")
	writeFile(t, filepath.Join(root, "Missing"), manifestFile, `{"name":"Missing","pluginType":"synchronous","entryPoint":{"command":"no-such-program-vcpnode --x"}}`)
	writeFile(t, filepath.Join(root, "NoStatus"), manifestFile, `{"name":"NoStatus","pluginType":"synchronous","entryPoint":{"command":"echo '{\"a\":1}'; echo oops >&2; exit 2"}}`)
	// Any status but "success" is a failure, whatever the exit code, as the
	// official node and VCPToolBox read it.
	writeFile(t, filepath.Join(root, "StatusFailed"), manifestFile, `{"name":"StatusFailed","pluginType":"synchronous","entryPoint":{"command":"echo '{\"status\":\"failed\",\"error\":\"no such city\"}'"}}`)
	writeFile(t, filepath.Join(root, "LogsThenFailed"), manifestFile, `{"name":"LogsThenFailed","pluginType":"synchronous","entryPoint":{"command":"echo loading; echo '{\"status\":\"failure\",\"message\":\"quota\"}'"}}`)
	writeFile(t, filepath.Join(root, "StatusOK"), manifestFile, `{"name":"StatusOK","pluginType":"asynchronous","entryPoint":{"command":"echo '{\"status\":\"ok\",\"result\":\"x\"}'"}}`)
	writeFile(t, filepath.Join(root, "FailedExit1"), manifestFile, `{"name":"FailedExit1","pluginType":"synchronous","entryPoint":{"command":"echo '{\"status\":\"failed\",\"error\":\"bad key\"}'; exit 1"}}`)
	set := scan(t, newHost(t, Options{}), root)
	cases := []struct {
		plugin   string
		reported string   // want a *ReportedError with exactly this text
		contains []string // else: want ErrFailed with these in the message
	}{
		{plugin: "FailJSON", reported: "quota exceeded for today"},
		{plugin: "FailNoJSON", contains: []string{`plugin "FailNoJSON" failed`, "exit status 3", "stderr: Traceback (most recent call last): ValueError: boom"}},
		{plugin: "Missing", contains: []string{"exit status 127", "no-such-program-vcpnode", "not found"}},
		{plugin: "NoStatus", contains: []string{"exit status 2", "stderr: oops"}}, // a status-less object does not hide a failure
		{plugin: "StatusFailed", reported: "no such city"},
		{plugin: "LogsThenFailed", reported: "quota"},
		{plugin: "StatusOK", reported: `plugin "StatusOK" answered status "ok" without a message`},
		{plugin: "FailedExit1", reported: "bad key"},
	}
	for _, c := range cases {
		t.Run(c.plugin, func(t *testing.T) {
			res, err := call(context.Background(), findTool(t, set, c.plugin), nil)
			if err == nil {
				t.Fatalf("want an error, got result %s", asJSON(t, res))
			}
			var rep *ReportedError
			if c.reported != "" {
				if !errors.As(err, &rep) || err.Error() != c.reported || rep.Plugin != c.plugin {
					t.Fatalf("error %#v (%q), want the plugin's own text %q", err, err, c.reported)
				}
				return
			}
			if !errors.Is(err, ErrFailed) || errors.As(err, &rep) {
				t.Fatalf("error %q should wrap ErrFailed", err)
			}
			for _, s := range c.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

// TestOutputPastTheCapIsAnError: 100 MiB through a 1 MiB cap is an error
// naming both sizes, never a result, and the daemon keeps about the cap.
func TestOutputPastTheCapIsAnError(t *testing.T) {
	const limit = 1 << 20
	root := pluginRoot(t, "Flood")
	set := scan(t, newHost(t, Options{MaxOutputBytes: limit}), root)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := call(context.Background(), findTool(t, set, "Flood"), nil)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatalf("want an error, got a result of %d bytes", len(asJSON(t, res)))
	}
	if !errors.Is(err, ErrOutputTooLarge) || !strings.Contains(err.Error(), "printed 104857600 bytes, the cap is 1048576") {
		t.Fatalf("error %q", err)
	}
	t.Logf("the call's error: %v", err)
	// 100 MiB went through the pipe; the daemon kept about the cap.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("allocated %d MiB to read 100 MiB with a 1 MiB cap", alloc>>20)
	}
}

// TestStatusAfterTheCapIsHonoured: a plugin that logs 20 MiB (more than the
// default 16 MiB cap) and then answers with a JSON error gets its error
// through, synchronous or asynchronous, with memory bounded by the cap.
func TestStatusAfterTheCapIsHonoured(t *testing.T) {
	for _, typ := range []string{"synchronous", "asynchronous"} {
		t.Run(typ, func(t *testing.T) {
			root := pluginRoot(t, "FloodThenError")
			writeFile(t, filepath.Join(root, "FloodThenError"), manifestFile,
				`{"name":"FloodThenError","pluginType":"`+typ+`","entryPoint":{"command":"sh flood.sh"}}`)
			set := scan(t, newHost(t, Options{}), root)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := call(context.Background(), findTool(t, set, "FloodThenError"), nil)
			runtime.ReadMemStats(&after)
			var rep *ReportedError
			if !errors.As(err, &rep) || rep.Text != "quota exceeded after a long log" {
				t.Fatalf("error %v, want the plugin's own JSON error", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2*DefaultMaxOutputBytes+8<<20 {
				t.Fatalf("allocated %d MiB for 20 MiB of output with a 16 MiB cap", alloc>>20)
			}
		})
	}
}

func TestSyncPluginAnswersAtExitDespiteABackgroundChild(t *testing.T) {
	root := pluginRoot(t, "Background")
	set := scan(t, newHost(t, Options{}), root)
	// The background child sleeps for ten minutes; the call must not wait
	// for it. waitLimit tells the two apart and leaves a loaded machine
	// the time to start the plugin.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	res, err := call(ctx, findTool(t, set, "Background"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "answered" {
		t.Fatalf("result %q", got)
	}
	// A synchronous run ends with its answer: what its leader left
	// running is stopped.
	pid := waitPidFile(t, filepath.Join(root, "Background", "bg.pid"))
	testwait.For(t, "the background child to be stopped", func() bool { return proctreetest.Collected(pid) })
}

// TestSyncPluginStopKillsTheWholeGroup: a plugin that ignores SIGTERM and
// whose grandchild (also ignoring it) holds stdout is stopped by a timeout,
// by a cancel and by Close, leaving no process behind.
func TestSyncPluginStopKillsTheWholeGroup(t *testing.T) {
	cancelled := errors.New("cancel_tool from the server")
	cases := []struct {
		name    string
		stop    func(h *Host, cancel context.CancelCauseFunc)
		ctx     func() (context.Context, context.CancelCauseFunc)
		wantErr error
	}{
		{
			// The dispatcher's deadline, delivered once both pid files exist:
			// a real 3 s timer raced the plugin's start on a loaded machine.
			name: "timeout",
			ctx: func() (context.Context, context.CancelCauseFunc) {
				return context.WithCancelCause(context.Background())
			},
			stop:    func(_ *Host, cancel context.CancelCauseFunc) { cancel(context.DeadlineExceeded) },
			wantErr: context.DeadlineExceeded,
		},
		{
			name: "cancel",
			ctx: func() (context.Context, context.CancelCauseFunc) {
				return context.WithCancelCause(context.Background())
			},
			stop:    func(_ *Host, cancel context.CancelCauseFunc) { cancel(cancelled) },
			wantErr: cancelled,
		},
		{
			name: "host closed",
			ctx: func() (context.Context, context.CancelCauseFunc) {
				return context.WithCancelCause(context.Background())
			},
			stop: func(h *Host, _ context.CancelCauseFunc) {
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				go func() { _ = h.Close(ctx) }() // returns once the plugin is reaped; checked below
			},
			wantErr: ErrClosed,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := pluginRoot(t, "Hang")
			h := newHost(t, Options{KillGrace: 300 * time.Millisecond})
			tool := findTool(t, scan(t, h, root), "Hang")
			if tool.(*pluginTool).run.launch.shell {
				t.Fatal("`sh hang.sh` should be spawned directly, so the leader is the script's shell")
			}
			ctx, cancel := c.ctx()
			defer cancel(nil)
			done := make(chan error, 1)
			go func() {
				_, err := call(ctx, tool, nil)
				done <- err
			}()
			leader := waitPidFile(t, filepath.Join(root, "Hang", "leader.pid"))
			grandchild := waitPidFile(t, filepath.Join(root, "Hang", "grandchild.pid"))
			c.stop(h, cancel)
			var err error
			select {
			case err = <-done:
			case <-time.After(waitLimit):
				t.Fatal("Invoke did not return after its context ended")
			}
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("error %v, want %v", err, c.wantErr)
			}
			// Invoke returns only after the group is stopped and the leader reaped.
			if !proctreetest.Collected(leader) {
				t.Errorf("leader %d still exists after Invoke returned", leader)
			}
			assertGroupGone(t, leader, leader, grandchild)
			if h.Kills() != 1 {
				t.Errorf("Kills() = %d, want 1", h.Kills())
			}
		})
	}
}

func TestInvokeAfterCloseFails(t *testing.T) {
	h := newHost(t, Options{})
	set := scan(t, h, pluginRoot(t, "Echo"))
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := call(context.Background(), findTool(t, set, "Echo"), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("error %v, want ErrClosed", err)
	}
	if h.Started() != 0 {
		t.Fatalf("Started() = %d", h.Started())
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	if o.MaxOutputBytes != 16<<20 || o.KillGrace != 2*time.Second || o.AsyncMaxRuntime != 30*time.Minute || o.Environ == nil {
		t.Fatalf("defaults %+v", o)
	}
}

// TestFailedPluginQuotesItsExceptionLine: a Python plugin that dies with a
// traceback longer than any fixed quote gets an error holding the
// exception line (the last one), not the start of the traceback cut before
// it; a stdio plugin's, a static plugin's and a direct host's failures
// share this summary (toolhost.StderrSummary).
func TestFailedPluginQuotesItsExceptionLine(t *testing.T) {
	needPython(t)
	root := t.TempDir()
	dir := filepath.Join(root, "DeepFail")
	writeFile(t, dir, manifestFile, `{"name":"DeepFail","pluginType":"synchronous","entryPoint":{"command":"python3 deep_fail_with_a_long_file_name.py"}}`)
	writeFile(t, dir, "deep_fail_with_a_long_file_name.py", `import sys
sys.stdin.read()
def load_the_configuration_of_the_weather_service():
    return parse_the_configuration_file_that_was_given()
def parse_the_configuration_file_that_was_given():
    return read_every_section_of_the_configuration()
def read_every_section_of_the_configuration():
    return undefined_configuration_section_name
load_the_configuration_of_the_weather_service()
`)
	set := scan(t, newHost(t, Options{}), root)
	_, err := call(context.Background(), findTool(t, set, "DeepFail"), nil)
	if err == nil || !errors.Is(err, ErrFailed) {
		t.Fatalf("want ErrFailed, got %v", err)
	}
	msg := err.Error()
	if !strings.HasSuffix(msg, "stderr: NameError: name 'undefined_configuration_section_name' is not defined") || strings.Contains(msg, "^^^") {
		t.Fatalf("the error does not end with the exception line: %q", msg)
	}
}
