package direct

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
)

func TestCommonJSPluginGetsConfigEnvContextAndSignal(t *testing.T) {
	needNode(t)
	root := pluginRoot(t, "Common")
	h := newTestHost(t, Options{})
	l := h.Load(scanDirect(t, root), Settings{})
	tool := findTool(t, l, "Common")
	if s := tool.Spec(); s.Timeout != 4*time.Second || s.Name != "Common" {
		t.Errorf("spec %+v", s)
	}
	v, err := invoke(nil, tool, map[string]string{"q": "<a&b>"}, `{"agent":"x"}`)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Args       map[string]string
		Calls      int
		PluginName string
		Vcp        map[string]string
		Signal     bool
		Config     map[string]any
		Env, Cwd   string
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		t.Fatalf("result %T %v, want the object as it is", v, v)
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "Common")
	if got.Args["q"] != "<a&b>" || got.Calls != 1 || got.PluginName != "Common" || got.Vcp["agent"] != "x" || !got.Signal ||
		got.Env != "hello" || got.Cwd != dir {
		t.Errorf("processToolCall saw %+v", got)
	}
	wantCfg := map[string]any{"COUNT": 7.0, "FLAG": true, "WORD": "hello", "DebugMode": false, "PROJECT_BASE_PATH": filepath.Dir(root)}
	if asJSON(t, got.Config) != asJSON(t, wantCfg) {
		t.Errorf("initialize config %v, want %v", got.Config, wantCfg)
	}
	// Without _vcpContext the key is absent, and the module's state persists.
	v, err = invoke(nil, tool, nil, "")
	if err != nil || !strings.Contains(asJSON(t, v), `"vcp":"absent"`) || !strings.Contains(asJSON(t, v), `"calls":2`) {
		t.Errorf("second call: %v %v", asJSON(t, v), err)
	}
}

func TestResultsMapLikeStdioResults(t *testing.T) {
	needNode(t)
	_, tool := loadPlugin(t, Options{}, "Common")
	cases := []struct {
		mode, want, err string
	}{
		{"text", `{"content":[{"type":"text","text":"plain text"}]}`, ""},
		{"throw", "", "boom: because"},
		{"reject-object", "", "refused by the plugin"},
	}
	for _, c := range cases {
		v, err := invoke(nil, tool, map[string]string{"mode": c.mode, "why": "because"}, "")
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.mode, err, c.err)
			}
			continue
		}
		if err != nil || asJSON(t, v) != c.want {
			t.Errorf("%s: %s %v, want %s", c.mode, asJSON(t, v), err, c.want)
		}
	}
}

func TestESMPluginsLoad(t *testing.T) {
	needNode(t)
	root := pluginRoot(t, "Esm", "EsmDefault")
	h := newTestHost(t, Options{})
	l := h.Load(scanDirect(t, root), Settings{})
	v, err := invoke(nil, findTool(t, l, "Esm"), map[string]string{"say": "hi"}, "")
	if err != nil || asJSON(t, v) != `{"content":[{"type":"text","text":"esm says hi to Esm"}]}` {
		t.Errorf("named exports: %s %v", asJSON(t, v), err)
	}
	v, err = invoke(nil, findTool(t, l, "EsmDefault"), map[string]string{"n": "41"}, "")
	if err != nil || asJSON(t, v) != `{"default":true,"n":42}` {
		t.Errorf("default export: %s %v", asJSON(t, v), err)
	}
}

// TestWhatCannotRunIsListedWithTheReason: modules that need the server's
// files or a missing package, a service whose initialize fails, a
// hybridservice with no processToolCall and a service with routes are
// unsupported, with why; the others load beside them (a hybridservice
// whose initialize fails too, with a notice).
func TestWhatCannotRunIsListedWithTheReason(t *testing.T) {
	needNode(t)
	root := pluginRoot(t, "NeedsServer", "NeedsPackage", "ServiceInitFails", "InitFails", "NoProcess", "Routes", "Bot", "Esm", "HybridRoutes", "ExitsOnLoad")
	h := newTestHost(t, Options{})
	l := h.Load(scanDirect(t, root), Settings{})
	want := map[string][]string{
		"NeedsServer":      {"does not load: Cannot find module", "Plugin.js", "VCP server's own files"},
		"NeedsPackage":     {"Cannot find module 'vcpnode-no-such-package'", "npm install"},
		"ServiceInitFails": {"initialize() failed: no token"},
		"NoProcess":        {"no processToolCall"},
		"Routes":           {"registerRoutes", "no web server"},
		"ExitsOnLoad":      {"ended during loading the module", "exit status 3", "fatal: no licence for this machine"},
	}
	for name, parts := range want {
		reason := unsupportedReason(l, name)
		for _, p := range parts {
			if !strings.Contains(reason, p) {
				t.Errorf("%s: reason %q lacks %q", name, reason, p)
			}
		}
		if strings.Contains(reason, "\n") || strings.Contains(reason, "second line") {
			t.Errorf("%s: reason is not one line: %q", name, reason)
		}
	}
	if len(l.Unsupported) != len(want) {
		t.Errorf("unsupported %v", l.Unsupported)
	}
	if len(l.Tools) != 3 {
		t.Errorf("tools %v", l.Tools)
	}
	if v, err := invoke(nil, findTool(t, l, "HybridRoutes"), nil, ""); err != nil || !strings.Contains(asJSON(t, v), "still works") {
		t.Errorf("a hybridservice with routes still answers: %s %v", asJSON(t, v), err)
	}
	notices := map[string]string{}
	for _, n := range l.Notices {
		notices[n.Name] = n.Reason
	}
	if len(notices) != 2 || !strings.Contains(notices["HybridRoutes"], "registerApiRoutes") ||
		!strings.Contains(notices["InitFails"], "initialize() failed: no database") || strings.Contains(notices["InitFails"], "second line") {
		t.Errorf("notices %v", l.Notices)
	}
	if len(l.Services) != 1 || l.Services[0].Name != "Bot" {
		t.Errorf("services %v", l.Services)
	}
	if got := readFile(filepath.Join(root, "Bot", "started.txt")); got != "false" {
		t.Errorf("service initialize wrote %q", got)
	}
	testwait.For(t, "the failed hosts to be reaped", func() bool { return h.Running() == 4 })
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readFile(filepath.Join(root, "Bot", "stopped.txt")); got != "ok" {
		t.Errorf("service shutdown() was not called before stop: %q", got)
	}
}

// TestFailedInitializeKeepsTheTool: a hybridservice whose initialize()
// throws is registered as the official node registers it, with a notice
// naming the error, and its calls reach processToolCall, which answers for
// itself; it is never missing until a reload.
func TestFailedInitializeKeepsTheTool(t *testing.T) {
	needNode(t)
	h := newTestHost(t, Options{})
	l := h.Load(scanDirect(t, pluginRoot(t, "InitFailsAnswers")), Settings{})
	if len(l.Unsupported) != 0 || len(l.Notices) != 1 ||
		!strings.Contains(l.Notices[0].Reason, "initialize() failed: connect ECONNREFUSED 127.0.0.1:5432") {
		t.Fatalf("unsupported %v, notices %v", l.Unsupported, l.Notices)
	}
	_, err := invoke(nil, findTool(t, l, "InitFailsAnswers"), nil, "")
	var rep *plugin.ReportedError
	if !errors.As(err, &rep) || err.Error() != "database not connected yet" {
		t.Fatalf("the call should get the plugin's own answer: %v", err)
	}
}

func TestWithoutNodeEverythingIsListedAsNeedingIt(t *testing.T) {
	root := pluginRoot(t, "Esm", "Bot")
	h := newTestHost(t, Options{})
	l := h.Load(scanDirect(t, root), Settings{Node: filepath.Join(t.TempDir(), "no-node")})
	if len(l.Tools) != 0 || len(l.Unsupported) != 2 {
		t.Fatalf("%+v", l)
	}
	for _, e := range l.Unsupported {
		if !strings.Contains(e.Reason, "needs Node.js") {
			t.Errorf("%s: %q", e.Name, e.Reason)
		}
	}
}

// TestHungCallKillsAndRestartsItsHost: a call that ignores its AbortSignal
// past its deadline (or a cancel_tool) plus Grace gets its host killed;
// another call in flight on that host fails clearly; the next call runs on
// a new host.
func TestHungCallKillsAndRestartsItsHost(t *testing.T) {
	needNode(t)
	for _, cause := range []error{toolhost.ErrTimeout, toolhost.ErrCancelled} {
		t.Run(cause.Error(), func(t *testing.T) {
			h, tool := loadPlugin(t, Options{Grace: 500 * time.Millisecond}, "Common")

			other := make(chan error, 1)
			go func() {
				_, err := invoke(nil, tool, map[string]string{"mode": "hang"}, "")
				other <- err
			}()
			testwait.For(t, "the first call to reach the host", func() bool { return pendingCalls(tool) == 1 })
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			done := make(chan error, 1)
			go func() {
				_, err := invoke(ctx, tool, map[string]string{"mode": "hang"}, "")
				done <- err
			}()
			testwait.For(t, "the second call to reach the host", func() bool { return pendingCalls(tool) == 2 })
			cancel(cause) // the deadline or the server's cancel_tool, as the dispatcher signals them
			if err := <-done; !errors.Is(err, cause) {
				t.Fatalf("aborted call: %v", err)
			}
			select {
			case err := <-other:
				if !errors.Is(err, ErrRestarted) || !strings.Contains(err.Error(), "after it was aborted") {
					t.Errorf("the other in-flight call: %v", err)
				}
			case <-time.After(waitLimit):
				t.Fatal("the other call never ended")
			}
			if h.Kills() != 1 {
				t.Errorf("kills %d", h.Kills())
			}
			v, err := invoke(nil, tool, nil, "")
			if err != nil || !strings.Contains(asJSON(t, v), `"calls":1`) {
				t.Errorf("call after the restart: %s %v", asJSON(t, v), err)
			}
			if h.Restarts() != 1 {
				t.Errorf("restarts %d", h.Restarts())
			}
		})
	}
}

// TestBusyLoopIsKilledAtTheDeadline: a module that never yields its event
// loop cannot even see its AbortSignal; its host is killed after Grace.
func TestBusyLoopIsKilledAtTheDeadline(t *testing.T) {
	needNode(t)
	h, tool := loadPlugin(t, Options{Grace: 500 * time.Millisecond}, "Common")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 300*time.Millisecond, toolhost.ErrTimeout)
	defer cancel()
	if _, err := invoke(ctx, tool, map[string]string{"mode": "spin"}, ""); !errors.Is(err, toolhost.ErrTimeout) {
		t.Fatalf("spinning call: %v", err)
	}
	testwait.For(t, "the spinning host to be killed", func() bool { return h.Kills() == 1 })
	if v, err := invoke(nil, tool, nil, ""); err != nil || !strings.Contains(asJSON(t, v), `"calls":1`) {
		t.Errorf("call after the kill: %s %v", asJSON(t, v), err)
	}
}

// TestAbortSignalFiresOnCancelAndDeadline: a plugin that listens to its
// signal sees why, and answers, so its host is not killed.
func TestAbortSignalFiresOnCancelAndDeadline(t *testing.T) {
	needNode(t)
	h, tool := loadPlugin(t, Options{Grace: 10 * time.Second}, "Common")
	for _, c := range []struct {
		cause error
		want  string
	}{
		{toolhost.ErrCancelled, "AbortError: the call was cancelled by the server"},
		{toolhost.ErrTimeout, "TimeoutError: the call timed out"},
	} {
		file := filepath.Join(t.TempDir(), "aborted.txt")
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := invoke(ctx, tool, map[string]string{"mode": "listen", "file": file}, "")
			done <- err
		}()
		// Cancel once the call is surely in the host: it has a pending id.
		testwait.For(t, "the call to reach the host", func() bool { return pendingCalls(tool) == 1 })
		cancel(c.cause)
		if err := <-done; !errors.Is(err, c.cause) {
			t.Errorf("Invoke returned %v, want %v", err, c.cause)
		}
		testwait.For(t, "the plugin to see the abort", func() bool { return readFile(file) != "" })
		if got := readFile(file); got != c.want {
			t.Errorf("signal reason %q, want %q", got, c.want)
		}
		testwait.For(t, "the aborted call to settle", func() bool { return pendingCalls(tool) == 0 })
	}
	if h.Kills() != 0 || h.Started() != 1 {
		t.Errorf("kills %d started %d: a plugin that honours its signal keeps its host", h.Kills(), h.Started())
	}
}

// pendingCalls is how many calls the tool's current host has in flight.
func pendingCalls(tl toolhost.Tool) int {
	s := tl.(*tool).s
	s.mu.Lock()
	p := s.cur
	s.mu.Unlock()
	if p == nil {
		return -1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}

func TestProcessExitAndUncaughtExceptionRestartTheHost(t *testing.T) {
	needNode(t)
	h, tool := loadPlugin(t, Options{}, "Common")
	_, err := invoke(nil, tool, map[string]string{"mode": "exit"}, "")
	if !errors.Is(err, ErrRestarted) || !strings.Contains(err.Error(), "exit status 7") {
		t.Errorf("call that exits: %v", err)
	}
	// The next call waits for the restarted host.
	v, err := invoke(nil, tool, nil, "")
	if err != nil || !strings.Contains(asJSON(t, v), `"calls":1`) {
		t.Errorf("after process.exit: %s %v", asJSON(t, v), err)
	}
	if _, err := invoke(nil, tool, map[string]string{"mode": "crash"}, ""); err != nil {
		t.Errorf("crash call answers before the stray throw: %v", err)
	}
	testwait.For(t, "the second restart", func() bool { return h.Restarts() == 2 })
	if _, err := invoke(nil, tool, nil, ""); err != nil {
		t.Errorf("after an uncaught exception: %v", err)
	}
}

func TestStdoutFloodDoesNotBlockTheHost(t *testing.T) {
	needNode(t)
	_, tool := loadPlugin(t, Options{}, "Common")
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			v, err := invoke(nil, tool, map[string]string{"mode": "flood"}, "")
			if err != nil || asJSON(t, v) != `{"flooded":20971840}` {
				t.Errorf("flood: %s %v", asJSON(t, v), err)
			}
		})
	}
	wg.Wait()
}

func TestMaxMemorySetsTheHeapLimit(t *testing.T) {
	needNode(t)
	root := pluginRoot(t, "Common")
	h := newTestHost(t, Options{})
	mem := Settings{MaxMemoryMB: map[string]int{"Common": 96, "Other": 1}}
	v, err := invoke(nil, findTool(t, h.Load(scanDirect(t, root), mem), "Common"), map[string]string{"mode": "heap"}, "")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Limit float64 }
	if err := json.Unmarshal(v.(json.RawMessage), &got); err != nil {
		t.Fatal(err)
	}
	// V8 adds its young generation to the old-space cap.
	if mb := got.Limit / (1 << 20); mb < 96 || mb > 200 {
		t.Errorf("heap limit %.0f MiB with max_memory 96", mb)
	}
}

// TestReloadKeepsUnchangedModulesAndReplacesEdited: a Load with the same
// plugins keeps their hosts; an edited script is shut down and loaded
// again; a plugin that went away is shut down.
func TestReloadKeepsUnchangedModulesAndReplacesEdited(t *testing.T) {
	needNode(t)
	root := pluginRoot(t, "Common", "Bot")
	h := newTestHost(t, Options{})
	plugins := scanDirect(t, root)
	tool := findTool(t, h.Load(plugins, Settings{}), "Common")
	if _, err := invoke(nil, tool, nil, ""); err != nil {
		t.Fatal(err)
	}
	l := h.Load(scanDirect(t, root), Settings{})
	v, err := invoke(nil, findTool(t, l, "Common"), nil, "")
	if err != nil || !strings.Contains(asJSON(t, v), `"calls":2`) || h.Started() != 2 {
		t.Errorf("unchanged reload restarted the module: %s %v started=%d", asJSON(t, v), err, h.Started())
	}
	script := filepath.Join(root, "Common", "index.js")
	src := readFile(script) + "\nmodule.exports.edited = true;\n"
	writeAndBump(t, script, src)
	var onlyCommon = scanDirect(t, root)[:0]
	for _, p := range scanDirect(t, root) {
		if p.Name == "Common" {
			onlyCommon = append(onlyCommon, p)
		}
	}
	l = h.Load(onlyCommon, Settings{})
	if got := readFile(filepath.Join(root, "Common", "shutdown.txt")); got != "bye after 2" {
		t.Errorf("the replaced module's shutdown() wrote %q", got)
	}
	if got := readFile(filepath.Join(root, "Bot", "stopped.txt")); got != "ok" {
		t.Errorf("the removed service was not shut down: %q", got)
	}
	// A helper file beside the entry script counts too; a data file does not.
	writeAndBump(t, filepath.Join(root, "Common", "state.json"), `{"runtime":"data"}`)
	if l2 := h.Load(onlyCommon, Settings{}); h.Started() != 3 || len(l2.Tools) != 1 {
		t.Errorf("a data file written by the plugin reloaded it: started=%d", h.Started())
	}
	writeAndBump(t, filepath.Join(root, "Common", "helper.js"), "module.exports = 1;\n")
	l = h.Load(onlyCommon, Settings{})
	if h.Started() != 4 {
		t.Errorf("an edited helper .js did not reload the module: started=%d", h.Started())
	}
	v, err = invoke(nil, findTool(t, l, "Common"), nil, "")
	if err != nil || !strings.Contains(asJSON(t, v), `"calls":1`) {
		t.Errorf("after the edit: %s %v", asJSON(t, v), err)
	}
	testwait.For(t, "one host left", func() bool { return h.Running() == 1 })
}

// TestStopKillsWhatThePluginStarted: children the module spawned (ones
// that ignore SIGTERM, one of them in a session of its own) die with its
// host at stop. Outside Linux (process groups only) the detached one is
// out of reach, and is killed by the test itself.
func TestStopKillsWhatThePluginStarted(t *testing.T) {
	needNode(t)
	root := pluginRoot(t, "Spawner")
	h := newTestHost(t, Options{})
	v, err := invoke(nil, findTool(t, h.Load(scanDirect(t, root), Settings{}), "Spawner"), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Pids []int }
	if err := json.Unmarshal(v.(json.RawMessage), &got); err != nil || len(got.Pids) != 2 {
		t.Fatalf("result %s: %v", asJSON(t, v), err)
	}
	for _, pid := range got.Pids {
		if !processRunning(pid) {
			t.Fatalf("the plugin's child %d is not running", pid)
		}
	}
	want := got.Pids
	if runtime.GOOS != "linux" {
		want = got.Pids[:1]
		t.Cleanup(func() { _ = signalPid(got.Pids[1], os.Kill) })
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, pid := range want {
		testwait.For(t, fmt.Sprintf("the plugin's child %d to die", pid), func() bool { return !processRunning(pid) })
	}
}

// processRunning: pid exists and is not a zombie (an orphan's zombie waits
// for init, which may be slow to reap it in a container).
func processRunning(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return signalPid(pid, syscall.Signal(0)) == nil
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestHostScriptFitsAPipeBuffer: spawn writes the script into the child's
// stdin pipe before starting it, which needs no reader only while it fits
// the smallest pipe buffer (16 KiB on macOS).
func TestHostScriptFitsAPipeBuffer(t *testing.T) {
	if n := len(hostScript); n == 0 || n > 16<<10 {
		t.Fatalf("host.js is %d bytes", n)
	}
}

// signalPid sends sig to pid (through os, so the tests compile on Windows).
func signalPid(pid int, sig os.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Signal(sig)
}
