package console_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/internal/nodetest"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/toolhost"
)

// -screenshots writes the pages' pictures into docs/console for docs/console.md.
var screenshots = flag.Bool("screenshots", false, "write the console's screenshots to docs/console")

const chromiumPath = "/usr/bin/chromium"

// newBrowser starts one headless Chromium with an empty profile. Without
// Chromium the test is skipped, except under CI where .ci/run installs it.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath
	if _, err := os.Stat(path); err != nil {
		p, lerr := exec.LookPath("chromium")
		if lerr != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("no Chromium at %s or on PATH under CI (.ci/run installs Debian's chromium)", chromiumPath)
			}
			t.Skipf("no Chromium at %s or on PATH: the console's browser test needs it (apt-get install chromium)", chromiumPath)
		}
		path = p
	}
	// Not t.TempDir: Chromium's helpers may still be writing to the profile
	// when the test ends, which t.TempDir would report as an error.
	profile, err := os.MkdirTemp("", "vcpnode-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-crash-reporter", true),
		chromedp.UserDataDir(profile),
		// Chromium keeps crash reports and caches under $HOME and the XDG
		// directories whatever the profile: the test's own, never ~/.config.
		chromedp.Env("HOME="+profile, "XDG_CONFIG_HOME="+filepath.Join(profile, "config"),
			"XDG_CACHE_HOME="+filepath.Join(profile, "cache"), "XDG_DATA_HOME="+filepath.Join(profile, "data")),
		chromedp.WindowSize(1100, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc(); os.RemoveAll(profile) })
	// Start the browser now, so that a failure to start is reported as such.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// browserStep runs actions in the browser with a deadline, and on failure
// stops the test with what the page says.
func browserStep(t *testing.T, bctx context.Context) func(what string, actions ...chromedp.Action) {
	return func(what string, actions ...chromedp.Action) {
		t.Helper()
		ctx, cancel := context.WithTimeout(bctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Run(ctx, actions...); err != nil {
			var page string
			dctx, dcancel := context.WithTimeout(bctx, 5*time.Second)
			defer dcancel()
			_ = chromedp.Run(dctx, chromedp.Evaluate(`document.body.innerText + "\n" + document.querySelector("#exec-tool")?.value + "\n" + document.querySelector("main").innerHTML`, &page))
			t.Fatalf("%s: %v\nthe page says:\n%s", what, err, page)
		}
	}
}

// TestConsoleBrowser drives the real console in headless Chromium: one
// browser for the whole story, each page checked against the daemon and
// the fake hub.
func TestConsoleBrowser(t *testing.T) {
	bctx := newBrowser(t)
	gate := testtool.NewGate()
	h := nodetest.Start(t, nodetest.Options{Tools: []toolhost.Tool{testtool.Thumb{}, gate}, Config: func(c *config.Config) {
		c.Node.ExposedTools = []string{"Echo", "Thumb"}
		c.Plugins.StateDir = t.TempDir() // the console's tool switches
		c.Tools = map[string]config.ToolConfig{
			"Echo":  {Approval: "ask", ApprovalTimeout: config.Duration(time.Minute), Timeout: config.Duration(5 * time.Minute)},
			"Thumb": {Sandbox: "offline"},
		}
	}})
	conn := h.Accept()
	h.WaitState("connected", func(s node.ConnState) bool { return s.Phase == node.PhaseConnected && s.ServerID != "" })
	con, c := h.Console(time.Hour)

	lr, err := c.ConsoleLogin(h.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	run := browserStep(t, bctx)
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var buf []byte // quality 100 makes a PNG
			if err := chromedp.FullScreenshot(&buf, 100).Do(ctx); err != nil {
				return err
			}
			if len(buf) == 0 {
				t.Errorf("screenshot %s is empty", name)
			}
			if *screenshots {
				dir := filepath.Join("..", "docs", "console")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				return os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
			}
			return nil
		})
	}

	// Log in with the token: the page shows the live status.
	var phase, serverID string
	run("log in and see status",
		chromedp.Navigate(lr.URL),
		chromedp.WaitVisible(`#status-phase`, chromedp.ByQuery),
		chromedp.Text(`#status-phase`, &phase, chromedp.ByQuery),
		chromedp.Text(`#status-list`, &serverID, chromedp.ByQuery),
		shot("status"),
	)
	st, _ := h.Node.State()
	if phase != "connected" || !strings.Contains(serverID, st.ServerID) {
		t.Errorf("status page: phase %q, list %q; want connected and server id %s", phase, serverID, st.ServerID)
	}

	// Tools: every tool with its schema and its sandbox profile (a
	// built-in tool starts no process and has none).
	var tools, thumbFacts, gateFacts string
	run("tools page",
		chromedp.Navigate("http://"+con.Addr()+"/#tools"),
		chromedp.WaitVisible(`#tool-Thumb-h`, chromedp.ByQuery),
		chromedp.Text(`#tools-list`, &tools, chromedp.ByQuery),
		chromedp.Text(`#tool-Thumb-facts`, &thumbFacts, chromedp.ByQuery),
		chromedp.Text(`#tool-Gate-facts`, &gateFacts, chromedp.ByQuery),
		shot("tools"),
	)
	for _, want := range []string{"Thumb", "exposed", "Gate", "not exposed", "approval ask"} {
		if !strings.Contains(tools, want) {
			t.Errorf("tools page lacks %q:\n%s", want, tools)
		}
	}
	if !strings.Contains(thumbFacts, "sandbox offline") || strings.Contains(gateFacts, "sandbox") {
		t.Errorf("tools page: Thumb's facts %q (want its profile, offline), the built-in Gate's %q (want none)", thumbFacts, gateFacts)
	}
	if got, _ := h.Registered(conn); strings.Join(got, ",") != "Echo,Thumb" {
		t.Fatalf("registered at start: %v", got)
	}
	// Switching Thumb off in the page changes the server's registration.
	run("switch Thumb off",
		chromedp.Click(`#tool-Thumb-expose`, chromedp.ByQuery),
		chromedp.WaitVisible(`#tool-Thumb-reset`, chromedp.ByQuery),
	)
	<-conn.Done()
	conn = h.Accept()
	if got, _ := h.Registered(conn); strings.Join(got, ",") != "Echo" {
		t.Errorf("registered after switching Thumb off: %v", got)
	}

	// Executor: the form generated from Thumb's schema runs it.
	var result string
	run("executor",
		chromedp.Navigate("http://"+con.Addr()+"/#executor"),
		chromedp.WaitReady(`#exec-tool option[value="Thumb"]`, chromedp.ByQuery),
		chromedp.SetValue(`#exec-tool`, "Thumb", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#exec-tool").dispatchEvent(new Event("change"))`, nil),
		chromedp.WaitVisible(`#param-size`, chromedp.ByQuery),
		chromedp.SendKeys(`#param-path`, "cat.png", chromedp.ByQuery),
		chromedp.SendKeys(`#param-size`, "128", chromedp.ByQuery),
		chromedp.SetValue(`#param-format`, `"jpeg"`, chromedp.ByQuery),
		chromedp.Click(`#exec-run`, chromedp.ByQuery),
		chromedp.WaitVisible(`#exec-result .result`, chromedp.ByQuery),
		chromedp.Text(`#exec-result`, &result, chromedp.ByQuery),
		chromedp.WaitVisible(`#exec-history li`, chromedp.ByQuery),
		shot("executor"),
	)
	for _, want := range []string{"Thumb", "ok", `"size": 128`, `"format": "jpeg"`, `"crop": false`, `"path": "cat.png"`} {
		if !strings.Contains(result, want) {
			t.Errorf("executor result lacks %q:\n%s", want, result)
		}
	}

	// Parser: a pasted reply's call is found and run.
	reply := "Let me look.\n<<<[TOOL_REQUEST]>>>\ntool_name:「始」Thumb「末」,\npath:「始」dog.png「末」,\nsize:「始」64「末」\n<<<[END_TOOL_REQUEST]>>>\n"
	var parsed, ran string
	run("parser",
		chromedp.Navigate("http://"+con.Addr()+"/#parser"),
		chromedp.WaitVisible(`#parse-text`, chromedp.ByQuery),
		chromedp.SetValue(`#parse-text`, reply, chromedp.ByQuery),
		chromedp.Click(`#parse-run`, chromedp.ByQuery),
		chromedp.WaitVisible(`#parse-run-0`, chromedp.ByQuery),
		chromedp.Text(`#parse-summary`, &parsed, chromedp.ByQuery),
		chromedp.Click(`#parse-run-0`, chromedp.ByQuery),
		chromedp.WaitVisible(`#parse-result .result`, chromedp.ByQuery),
		chromedp.Text(`#parse-result .result`, &ran, chromedp.ByQuery),
		shot("parser"),
	)
	if parsed != "1 call found" || !strings.Contains(ran, `"size": 64`) || !strings.Contains(ran, `"path": "dog.png"`) {
		t.Errorf("parser: %q, ran %q", parsed, ran)
	}

	// Run all: a VCP call and a mended <tool_code> call run in parallel,
	// answered as VCP result blocks in call order.
	reply2 := reply + "<tool_code>{'name': 'Thumb', 'arguments': {'path': 'owl.png', 'size': 32,}}</tool_code>\n"
	var answered, summary string
	run("parser run all",
		chromedp.SetValue(`#parse-text`, reply2, chromedp.ByQuery),
		chromedp.Click(`#parse-run`, chromedp.ByQuery),
		chromedp.WaitVisible(`#parse-run-1`, chromedp.ByQuery),
		chromedp.Text(`#parse-summary`, &summary, chromedp.ByQuery),
		chromedp.SetValue(`#parse-results-format`, "vcp", chromedp.ByQuery),
		chromedp.Click(`#parse-parallel`, chromedp.ByQuery),
		chromedp.Click(`#parse-run-all`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#parse-results-text").textContent.includes("owl.png")`, nil),
		chromedp.Text(`#parse-results-text`, &answered, chromedp.ByQuery),
	)
	first, second := strings.Index(answered, "dog.png"), strings.Index(answered, "owl.png")
	if summary != "2 calls found" || strings.Count(answered, "<<<[TOOL_RESULT]>>>") != 2 || strings.Count(answered, "status:「始」success「末」") != 2 ||
		first < 0 || second < first {
		t.Errorf("run all: %q, answered:\n%s", summary, answered)
	}

	// Approvals: a server call to Echo waits; approving it in the page
	// sends its result to the hub.
	echoed := h.AsyncCall(conn, "srv-1", "Echo", map[string]string{"text": "hello from the server"})
	run("approvals",
		chromedp.Navigate("http://"+con.Addr()+"/#approvals"),
		chromedp.WaitVisible(`#approvals-list li`, chromedp.ByQuery),
		shot("approvals"),
		chromedp.Click(`#approvals-list button[id$="-approve"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#approvals-empty`, chromedp.ByQuery),
	)
	res := h.WaitResult(echoed)
	if res.Status != "success" || !strings.Contains(string(res.Result), "hello from the server") {
		t.Errorf("approved call's result at the hub: %+v", res)
	}

	// "Always allow": the call runs, the rule is listed, and the next
	// call of Echo runs without asking; "Forget" asks again.
	echoed = h.AsyncCall(conn, "srv-2", "Echo", map[string]string{"text": "always"})
	var rules string
	run("always allow",
		chromedp.WaitVisible(`#approvals-list li`, chromedp.ByQuery),
		chromedp.Click(`#approvals-list button[id$="-always-approve"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#approvals-empty`, chromedp.ByQuery),
		chromedp.WaitVisible(`#rule-Echo-forget`, chromedp.ByQuery),
		chromedp.Text(`#rules-list`, &rules, chromedp.ByQuery),
	)
	if res := h.WaitResult(echoed); res.Status != "success" {
		t.Errorf("the call answered with Always allow: %+v", res)
	}
	if !strings.Contains(rules, "Echo always allowed") {
		t.Errorf("rules list: %q", rules)
	}
	if res := h.WaitResult(h.AsyncCall(conn, "srv-3", "Echo", map[string]string{"text": "unasked"})); res.Status != "success" || h.Node.Approvals().Len() != 0 {
		t.Errorf("the call after Always allow: %+v", res)
	}
	run("forget",
		chromedp.Click(`#rule-Echo-forget`, chromedp.ByQuery),
		chromedp.WaitVisible(`#rules-empty`, chromedp.ByQuery),
	)
	if rs := h.Node.ApprovalRules(); len(rs.Rules) != 0 {
		t.Errorf("rules after Forget: %+v", rs.Rules)
	}
	echoed = h.AsyncCall(conn, "srv-4", "Echo", nil)
	h.WaitPending(1)
	run("deny after forget",
		chromedp.WaitVisible(`#approvals-list li`, chromedp.ByQuery),
		chromedp.Click(`#approvals-list button[id$="-deny"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#approvals-empty`, chromedp.ByQuery),
	)
	if res := h.WaitResult(echoed); res.Error != `tool "Echo" denied by the node's owner` {
		t.Errorf("the call after Forget: %+v", res)
	}

	// Activity: the event stream shows this node's calls, the approved
	// server call among them.
	var activity string
	run("activity",
		chromedp.Navigate("http://"+con.Addr()+"/#activity"),
		chromedp.WaitVisible(`#tab-activity`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#activity-list").innerText.includes("Echo")`, nil, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Text(`#activity-list`, &activity, chromedp.ByQuery),
		shot("activity"),
	)
	for _, want := range []string{"call_end", "Thumb", "Echo"} {
		if !strings.Contains(activity, want) {
			t.Errorf("activity lacks %q:\n%s", want, activity)
		}
	}
}
