package console_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vcpnode/vcpnode/bridge"
	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/events"
	"github.com/vcpnode/vcpnode/internal/fakehub"
	"github.com/vcpnode/vcpnode/internal/nodetest"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testmetrics"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// TestConsoleServerToolsBrowser drives the console's Server tools page in
// headless Chromium against a fake hub whose VCPToolBridge answers as the
// real plugin does: the list with its commands, a run from the Executor
// that an approval = "ask" holds until it is approved on the Approvals
// page, its result, and the call in the audit file and the metrics. The
// Tools page shows the name the server sees of a renamed tool.
func TestConsoleServerToolsBrowser(t *testing.T) {
	bctx := newBrowser(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	h := nodetest.Start(t, nodetest.Options{
		Hub: demohub.Options{Bridge: &demohub.Bridge{Plugins: fakehub.ServerPlugins(), ExcludedTools: []string{"VCPLog"},
			ExcludedDisplayKeywords: []string{"[AIO]"}, Run: fakehub.ServerRuns(nil)}},
		ServerListWait: 2 * time.Second,
		Config: func(c *config.Config) {
			c.Audit.File = audit
			c.Node.ToolNames = "{tool}_{node}"
			c.Bridge.Offer = []string{"Sci*"}
			c.Tools = map[string]config.ToolConfig{"vcp_SciCalculator": {Approval: "ask", ApprovalTimeout: config.Duration(time.Minute)}}
		},
	})
	h.Accept()
	h.WaitServerState(bridge.StateOffered)
	con, c := h.Console(time.Hour)
	metrics := h.Metrics()
	lr, err := c.ConsoleLogin(h.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + con.Addr()
	run := browserStep(t, bctx)

	// The list: each tool with its name here, whether MCP clients get it,
	// and its commands as the server describes them.
	var list, state, sciOffered, videoOffered string
	run("server tools page",
		chromedp.Navigate(lr.URL),
		chromedp.WaitVisible(`#status-phase`, chromedp.ByQuery),
		chromedp.Navigate(base+"/#server"),
		chromedp.WaitVisible(`#server-SciCalculator-h`, chromedp.ByQuery),
		chromedp.Click(`#server-SciCalculator details summary`, chromedp.ByQuery),
		chromedp.Text(`#server-list`, &list, chromedp.ByQuery),
		chromedp.Text(`#server-state`, &state, chromedp.ByQuery),
		chromedp.Text(`#server-SciCalculator-offered`, &sciOffered, chromedp.ByQuery),
		chromedp.Text(`#server-VideoGen-offered`, &videoOffered, chromedp.ByQuery),
	)
	if state != "the server offers 2 tools to nodes" {
		t.Errorf("server tools state = %q", state)
	}
	for _, want := range []string{"科学计算器", "SciCalculator", "vcp_SciCalculator", "Computes.", "calc", "expression (string, required)", "VideoGen", "vcp_VideoGen"} {
		if !strings.Contains(list, want) {
			t.Errorf("server tools page lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "VCPLog") || strings.Contains(list, "AIOTool") {
		t.Errorf("server tools page shows an excluded tool:\n%s", list)
	}
	if sciOffered != "offered to MCP clients" || videoOffered != "not offered to MCP clients" {
		t.Errorf("offered: SciCalculator %q, VideoGen %q", sciOffered, videoOffered)
	}

	// Run it from the Executor, loaded with its example's arguments: the
	// approval holds it until the owner approves it on the Approvals page.
	var tool, raw string
	run("load into the executor",
		chromedp.Click(`#server-SciCalculator-load`, chromedp.ByQuery),
		chromedp.WaitVisible(`#exec-raw`, chromedp.ByQuery),
		chromedp.Value(`#exec-tool`, &tool, chromedp.ByQuery),
		chromedp.Value(`#exec-raw`, &raw, chromedp.ByQuery),
	)
	if tool != "vcp_SciCalculator" || !strings.Contains(raw, `"expression": "1+1"`) || strings.Contains(raw, "tool_name") {
		t.Fatalf("executor loaded with %q and %s", tool, raw)
	}
	run("run, held for approval",
		chromedp.SetValue(`#exec-raw`, `{"expression": "6*7"}`, chromedp.ByQuery),
		chromedp.Click(`#exec-run`, chromedp.ByQuery),
	)
	if !testwait.Poll(h.Ctx, func() bool { return h.Node.Approvals().Len() == 1 }) {
		t.Fatal("the console's call of an ask server tool never waited for approval")
	}
	var running string
	run("still running", chromedp.Text(`#exec-result`, &running, chromedp.ByQuery))
	if !strings.Contains(running, "Running vcp_SciCalculator") {
		t.Fatalf("before approval the executor shows %q", running)
	}
	var result string
	run("approve it and see the result",
		chromedp.Navigate(base+"/#approvals"),
		chromedp.WaitVisible(`#approvals-list li`, chromedp.ByQuery),
		chromedp.Click(`#approvals-list button[id$="-approve"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#approvals-empty`, chromedp.ByQuery),
		chromedp.Navigate(base+"/#executor"),
		chromedp.WaitVisible(`#exec-history li`, chromedp.ByQuery),
		chromedp.Text(`#exec-history`, &result, chromedp.ByQuery),
	)
	if !strings.Contains(result, "vcp_SciCalculator — ok") {
		t.Errorf("the approved run's history: %q", result)
	}
	entries := testlog.ReadJSONLines[events.AuditEntry](t, audit)
	if len(entries) != 1 || entries[0].Tool != "vcp_SciCalculator" || entries[0].Outcome != "ok" || entries[0].Approval != "approved" {
		t.Errorf("audit: %+v", entries)
	}
	m := testmetrics.Scrape(t, h.Ctx, metrics.Addr())
	if v, ok := testmetrics.Value(m, "vcpnode_calls_total", map[string]string{"tool": "vcp_SciCalculator", "outcome": "ok"}); !ok || v != 1 {
		t.Errorf("vcpnode_calls_total{tool=vcp_SciCalculator,outcome=ok} = %v (%v)", v, ok)
	}

	// The Tools page names what the server calls a renamed tool.
	var echoName string
	run("renamed tool",
		chromedp.Navigate(base+"/#tools"),
		chromedp.WaitVisible(`#tool-Echo-server-name`, chromedp.ByQuery),
		chromedp.Text(`#tool-Echo-server-name`, &echoName, chromedp.ByQuery),
	)
	if echoName != "On the server as Echo_test-node" {
		t.Errorf("Echo's card says %q", echoName)
	}
}

// Without the bridge on the server, the page says so in plain words.
func TestConsoleServerToolsBrowserBridgeOff(t *testing.T) {
	bctx := newBrowser(t)
	h := nodetest.Start(t, nodetest.Options{Hub: demohub.Options{Bridge: &demohub.Bridge{Disabled: true, Plugins: fakehub.ServerPlugins()}},
		ServerListWait: 300 * time.Millisecond})
	h.Accept()
	h.WaitServerState(bridge.StateNone)
	con, c := h.Console(time.Hour)
	lr, err := c.ConsoleLogin(h.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	var state string
	run := browserStep(t, bctx)
	run("server tools page",
		chromedp.Navigate(lr.URL),
		chromedp.WaitVisible(`#status-phase`, chromedp.ByQuery),
		chromedp.Navigate("http://"+con.Addr()+"/#server"),
		chromedp.Poll(`document.querySelector("#server-state").textContent !== ""`, nil),
		chromedp.Text(`#server-state`, &state, chromedp.ByQuery),
	)
	if !strings.HasPrefix(state, "the server offers no tools to nodes: its VCPToolBridge plugin is missing or turned off") {
		t.Errorf("server tools state = %q", state)
	}
}
