package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/wsproto"
)

// useDemoKey makes the demo use key and clears $VCPNODE_KEY, which node.New
// would prefer to it. Tests that call it cannot run in parallel.
func useDemoKey(t *testing.T, key string) {
	t.Helper()
	t.Setenv(config.EnvKey, "")
	old := demoKey
	demoKey = func() string { return key }
	t.Cleanup(func() { demoKey = old })
}

// executeDemo runs args through cobra and returns Execute's error; it fails
// the test if the demo does not return in time.
func executeDemo(t *testing.T, ta *testApp, args ...string) error {
	t.Helper()
	root := newRootCmd(ta.app)
	root.SetArgs(args)
	done := make(chan error, 1)
	go func() {
		err := root.Execute()
		ta.flushLogs()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(demoTimeout + 2*demoStopWait + 5*time.Second):
		t.Fatalf("vcpnode %s did not return; stdout so far:\n%s", strings.Join(args, " "), ta.stdout)
		return nil
	}
}

// assertInOrder checks that every piece occurs in out, each after the previous one.
func assertInOrder(t *testing.T, out string, pieces []string) {
	t.Helper()
	rest := out
	for _, p := range pieces {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Errorf("output lacks %q after the previous expected line; output:\n%s", p, out)
			return
		}
		rest = rest[i+len(p):]
	}
}

func TestDemoShowsEveryCallAndHidesTheKey(t *testing.T) {
	const key = "DemoTestKey7Q2ZKX4MNB5LW"
	fileBase64 := base64.StdEncoding.EncodeToString([]byte(demoFileText))
	tests := []struct {
		name       string
		args       []string
		wantStderr string // "" means stderr must stay empty
	}{
		{"quiet by default", []string{"demo"}, ""},
		{"verbose shows the info log", []string{"demo", "--verbose"}, `"message":"connected"`},
		{"debug log", []string{"--log-level", "debug", "demo"}, "VCP_Key=REDACTED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			useDemoKey(t, key)
			ta := newTestApp(t)
			if err := executeDemo(t, ta, tt.args...); err != nil {
				t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, ta.stdout, ta.stderr)
			}
			stdout, stderr := ta.stdout.String(), ta.stderr.String()

			want := []string{
				"server  ws://127.0.0.1:",
				"key     random, not shown",
				"hub → node  connection_ack",
				"hub ← node  register_tools  serverName=demo-node tools=[Echo NodeInfo] cancelTool=true",
				"hub ← node  report_ip       serverName=demo-node",
			}
			for i, c := range demoCalls(demoFile{}) {
				want = append(want,
					fmt.Sprintf("call %d of 5: %s, %s", i+1, c.tool, c.describe),
					fmt.Sprintf("hub → node  execute_tool    %s requestId=fh-%d", c.tool, i+1),
					fmt.Sprintf("hub ← node  tool_result     fh-%d ", i+1),
					"  ok: ",
				)
			}
			want = append(want, "shutting down", "the node stopped cleanly", "hub ← node  (closed)", "5 calls: 3 succeeded, 2 failed as expected\n")
			assertInOrder(t, stdout, want)

			for _, w := range []string{
				`args={"message":"hello from the vcpnode demo"}`,
				fmt.Sprintf("fh-3 success: file of %d bytes, text/plain", len(demoFileText)),
				"decoding the base64 gives the file's exact bytes",
				`fh-4 error: cannot serve "/etc/passwd": it is outside the directories this node serves`,
				`fh-5 error: unknown tool "NoSuchTool"`,
			} {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if strings.Contains(stdout, "FAIL") || strings.Count(stdout, "  ok: ") != 5 {
				t.Errorf("stdout does not show 5 calls going as expected:\n%s", stdout)
			}
			if strings.Contains(stdout, fileBase64) {
				t.Errorf("stdout shows the file's base64:\n%s", stdout)
			}
			for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
				if strings.Contains(out, key) {
					t.Errorf("%s contains the key:\n%s", name, out)
				}
			}
			switch {
			case tt.wantStderr == "" && stderr != "":
				t.Errorf("stderr should be empty at the default level:\n%s", stderr)
			case !strings.Contains(stderr, tt.wantStderr):
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr)
			}
		})
	}
}

// TestDemoIgnoresTheKeyInTheEnvironment: $VCPNODE_KEY belongs to a real
// server; the demo uses its own random key and shows neither.
func TestDemoIgnoresTheKeyInTheEnvironment(t *testing.T) {
	useDemoKey(t, "RandomDemoKey-7c1")
	const envKey = "EnvironmentKey-3f9a.x"
	t.Setenv(config.EnvKey, envKey)
	ta := newTestApp(t)
	if err := executeDemo(t, ta, "demo", "--verbose"); err != nil {
		t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, ta.stdout, ta.stderr)
	}
	out := ta.stdout.String() + ta.stderr.String()
	if !strings.Contains(out, "key     random, not shown") || !strings.Contains(out, "5 calls: 3 succeeded, 2 failed as expected") {
		t.Errorf("output:\n%s", out)
	}
	for _, k := range []string{envKey, "RandomDemoKey-7c1"} {
		if strings.Contains(out, k) {
			t.Errorf("output contains a key (%s):\n%s", k, out)
		}
	}
}

func TestDemoStopsCleanlyOnSignal(t *testing.T) {
	useDemoKey(t, "SignalTestKey")
	ta := newTestApp(t)
	// Delivered before the demo starts: its watcher picks them up as soon
	// as the node exists, so the demo is stopped before any call.
	ta.sigs <- syscall.SIGINT
	ta.sigs <- syscall.SIGTERM
	err := executeDemo(t, ta, "demo")
	if !errors.Is(err, errDemoInterrupted) || !strings.Contains(err.Error(), "interrupt") {
		t.Fatalf("demo = %v, want %v naming the signal\nstdout:\n%s", err, errDemoInterrupted, ta.stdout)
	}
	assertInOrder(t, ta.stdout.String(), []string{
		"FAIL: the node did not connect: demo interrupted by interrupt",
		"shutting down",
		"the node stopped cleanly",
		"5 calls: 0 succeeded, 0 failed as expected, 5 not sent\n",
	})
	if code := report(ta.stderr, nil, err); code != exitError {
		t.Errorf("exit code %d, want %d", code, exitError)
	}
}

// Signals that came while the demo was being set up are acted on before
// watchDemoSignals returns, not whenever its goroutine gets to run: the node
// must never be started for an interrupted demo. Later ones still hurry.
func TestWatchDemoSignalsActsOnPendingSignalsAtOnce(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	sigs <- syscall.SIGINT
	sigs <- syscall.SIGTERM
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	hurried := make(chan struct{}, 4)
	stop := watchDemoSignals(sigs, zerolog.Nop(), cancel, func() { hurried <- struct{}{} })
	defer stop()
	if cause := context.Cause(ctx); !errors.Is(cause, errDemoInterrupted) || !strings.Contains(cause.Error(), "interrupt") {
		t.Fatalf("cause right after watchDemoSignals = %v, want %v by interrupt", cause, errDemoInterrupted)
	}
	if len(hurried) != 1 {
		t.Fatalf("hurried %d times for the pending second signal, want 1", len(hurried))
	}
	<-hurried
	sigs <- syscall.SIGTERM
	select {
	case <-hurried:
	case <-time.After(30 * time.Second):
		t.Fatal("a later signal did not hurry the node")
	}
}

func TestJudge(t *testing.T) {
	fileCall := demoCall{tool: files.ToolName, check: demoFile{path: "/r/f", data: []byte("abc")}.sameBytes}
	fileResult := func(data string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"status": "success", "fileData": data, "mimeType": "text/plain"})
		return b
	}
	text := json.RawMessage(`{"content":[{"type":"text","text":"echo: hi"}]}`)
	tests := []struct {
		name       string
		call       demoCall
		res        wsproto.ToolResult
		ok, failed bool
		detail     string
	}{
		{"success expected", demoCall{}, wsproto.ToolResult{Status: "success", Result: text}, true, false, "succeeded as expected"},
		{"text found", demoCall{check: hasText("hi")}, wsproto.ToolResult{Status: "success", Result: text}, true, false, `the text contains "hi"`},
		{"text missing", demoCall{check: hasText("bye")}, wsproto.ToolResult{Status: "success", Result: text}, false, false, `its text lacks "bye"`},
		{"no content", demoCall{check: hasText("x")}, wsproto.ToolResult{Status: "success", Result: json.RawMessage(`42`)}, false, false, "no content parts"},
		{"unexpected error", demoCall{}, wsproto.ToolResult{Status: "error", Error: "boom"}, false, true, "failed: boom"},
		{"expected error", demoCall{expectError: "unknown tool"}, wsproto.ToolResult{Status: "error", Error: `unknown tool "X"`}, true, true, `failed as expected: unknown tool "X"`},
		{"wrong error", demoCall{expectError: "outside"}, wsproto.ToolResult{Status: "error", Error: "busy"}, false, true, `an error containing "outside" was expected`},
		{"success where an error was expected", demoCall{expectError: "outside"}, wsproto.ToolResult{Status: "success", Result: text}, false, false, "succeeded, but an error"},
		{"odd status", demoCall{}, wsproto.ToolResult{Status: "maybe"}, false, false, `status "maybe"`},
		{"same file bytes", fileCall, wsproto.ToolResult{Status: "success", Result: fileResult("YWJj")}, true, false, "3 bytes, text/plain; decoding the base64 gives the file's exact bytes"},
		{"other file bytes", fileCall, wsproto.ToolResult{Status: "success", Result: fileResult("YWJk")}, false, false, "differ from the 3 of /r/f"},
		{"not base64", fileCall, wsproto.ToolResult{Status: "success", Result: fileResult("@@@")}, false, false, "fileData is not base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judge(tt.call, tt.res)
			if v.ok != tt.ok || v.failed != tt.failed || !strings.Contains(v.detail, tt.detail) {
				t.Errorf("judge = %+v, want ok=%t failed=%t detail containing %q", v, tt.ok, tt.failed, tt.detail)
			}
		})
	}
}

func TestDescribeFrame(t *testing.T) {
	big := strings.Repeat("0123456789", 1000)
	bigBase64 := base64.StdEncoding.EncodeToString([]byte(big))
	result := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name  string
		frame demohub.Frame
		want  string
	}{
		{"register_tools", demohub.Frame{Dir: demohub.FromNode, Msg: wsproto.RegisterTools{
			ServerName: "n", Capabilities: wsproto.Capabilities{CancelTool: true},
			Tools: []json.RawMessage{json.RawMessage(`{"name":"Zed"}`), json.RawMessage(`{"name":"Alpha"}`), json.RawMessage(`{}`)},
		}}, "  hub ← node  register_tools  serverName=n tools=[(unnamed) Alpha Zed] cancelTool=true"},
		{"execute_tool", demohub.Frame{Dir: demohub.ToNode, Msg: wsproto.ExecuteTool{
			RequestID: "r1", ToolName: "T", ToolArgs: map[string]json.RawMessage{"b": json.RawMessage(`"<x>"`), "a": json.RawMessage(`1`)},
		}}, `  hub → node  execute_tool    T requestId=r1 args={"a":1,"b":"<x>"}`},
		{"file data is summarised", demohub.Frame{Dir: demohub.FromNode, Msg: wsproto.ToolResult{
			RequestID: "r2", Status: "success", Result: result(map[string]string{"status": "success", "fileData": bigBase64, "mimeType": "image/png"}),
		}}, "  hub ← node  tool_result     r2 success: file of 10000 bytes, image/png (base64 not shown)"},
		{"text is clipped to one line", demohub.Frame{Dir: demohub.FromNode, Msg: wsproto.ToolResult{
			RequestID: "r3", Status: "success", Result: result(toolhost.ContentResult{Content: []toolhost.ContentPart{{Type: "text", Text: "a\nb " + big}, {Type: "text", Text: "second"}}}),
		}}, "  hub ← node  tool_result     r3 success: a ⏎ b " + big[:clipRunes-6] + "… (+1 more part(s))"},
		{"error", demohub.Frame{Dir: demohub.FromNode, Msg: wsproto.ToolResult{RequestID: "r4", Status: "error", Error: "no\nway"}},
			"  hub ← node  tool_result     r4 error: no ⏎ way"},
		{"plain JSON result", demohub.Frame{Dir: demohub.FromNode, Msg: wsproto.ToolResult{RequestID: "r5", Status: "success", Result: json.RawMessage(`{ "n": 1 }`)}},
			`  hub ← node  tool_result     r5 success: {"n":1}`},
		{"malformed", demohub.Frame{Dir: demohub.FromNode, Raw: []byte("nope{"), Err: errors.New("invalid JSON")},
			"  hub ← node  (malformed)     5 bytes that do not decode: invalid JSON"},
		{"unknown type", demohub.Frame{Dir: demohub.FromNode, Msg: wsproto.Unknown{TypeName: "mystery", Data: json.RawMessage(`{}`)}},
			"  hub ← node  mystery         2 bytes of data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := describeFrame(tt.frame)
			if got != tt.want {
				t.Errorf("describeFrame =\n%q\nwant\n%q", got, tt.want)
			}
			if strings.Contains(got, bigBase64[:64]) {
				t.Error("the line shows base64 file data")
			}
			if n := utf8.RuneCountInString(got); n > 200 {
				t.Errorf("the line has %d runes; payloads must be clipped", n)
			}
		})
	}
}

func TestDemoKeyIsRandomAndURLSafe(t *testing.T) {
	a, b := demoKey(), demoKey()
	if a == b || len(a) < 20 {
		t.Errorf("keys %d and %d characters long, equal=%t", len(a), len(b), a == b)
	}
	cfg := config.Default()
	cfg.Hub.Key = a
	if _, err := cfg.Key(func(string) string { return "" }); err != nil {
		t.Errorf("the node refuses the demo's key: %v", err)
	}
}
