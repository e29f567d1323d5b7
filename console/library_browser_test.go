package console_test

import (
	"bytes"
	"encoding/json"
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

// TestConsoleBrowserLibrary drives the tool library in headless Chromium:
// the mode and the held registration with its Register button, search and
// order as the owner types, a tool loaded into the executor and run, tools
// and commands without a schema loaded both ways and run, and a timeout
// set, refused when out of range, and given back to the config.
func TestConsoleBrowserLibrary(t *testing.T) {
	bctx := newBrowser(t)
	h := nodetest.Start(t, nodetest.Options{Tools: []toolhost.Tool{testtool.Thumb{}, testtool.Files{}, testtool.Calc{}}, Config: func(c *config.Config) {
		c.Node.ExposedTools = []string{"Echo", "Thumb"}
		c.Node.Register = false
		c.Plugins.StateDir = t.TempDir() // the console's tool switches
	}})
	conn := h.Accept()
	h.WaitState("connected", func(s node.ConnState) bool { return s.Phase == node.PhaseConnected })
	con, c := h.Console(time.Hour)
	lr, err := c.ConsoleLogin(h.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	run := browserStep(t, bctx)
	base := "http://" + con.Addr()

	// Status: the mode, and the tools held until Register is pressed,
	// which sends them to the server.
	var mode, held, registeredText string
	run("status: mode and held tools",
		chromedp.Navigate(lr.URL),
		chromedp.WaitVisible(`#register-now`, chromedp.ByQuery),
		chromedp.Text(`#status-mode`, &mode, chromedp.ByQuery),
		chromedp.Text(`#status-register-text`, &held, chromedp.ByQuery),
	)
	if mode != "distributed" || !strings.Contains(held, "waiting for vcpnode register") {
		t.Errorf("status: mode %q, registration %q", mode, held)
	}
	run("register",
		chromedp.Click(`#register-now`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#status-register-text").textContent.includes("registered with the server")`, nil),
		chromedp.Text(`#status-register`, &registeredText, chromedp.ByQuery),
	)
	if strings.TrimSpace(registeredText) != "Tools are registered with the server." {
		t.Errorf("registration after the button: %q", registeredText)
	}
	if got, _ := h.Registered(conn); strings.Join(got, ",") != "Echo,Thumb" {
		t.Fatalf("registered after the button: %v", got)
	}

	// Search filters as the owner types, in any case, over names and
	// descriptions; the order follows the choice.
	order := func() []string {
		var ids []string
		run("read the order", chromedp.Evaluate(`[...document.querySelectorAll("#tools-list li.card")].map((li) => li.id)`, &ids))
		return ids
	}
	var count string
	run("search by name",
		chromedp.Navigate(base+"/#tools"),
		chromedp.WaitVisible(`#tool-Thumb-h`, chromedp.ByQuery),
		chromedp.SendKeys(`#tools-search`, "tHuM", chromedp.ByQuery),
		chromedp.Poll(`document.querySelectorAll("#tools-list li.card").length === 1`, nil),
		chromedp.Text(`#tools-count`, &count, chromedp.ByQuery),
	)
	if ids := order(); len(ids) != 1 || ids[0] != "tool-Thumb" || !strings.HasPrefix(count, "1 of ") {
		t.Errorf("search tHuM: %v, %q", ids, count)
	}
	run("search by description",
		chromedp.Evaluate(`document.querySelector("#tools-search").value = ""`, nil),
		chromedp.SendKeys(`#tools-search`, "THUMBNAIL", chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#tools-list li.card")?.id === "tool-Thumb"`, nil),
		chromedp.Evaluate(`document.querySelector("#tools-search").value = ""`, nil),
		chromedp.SendKeys(`#tools-search`, "repeats every", chromedp.ByQuery),
		chromedp.Poll(`document.querySelectorAll("#tools-list li.card").length === 1 && document.querySelector("#tools-list li.card").id === "tool-Echo"`, nil),
		chromedp.Evaluate(`document.querySelector("#tools-search").value = ""`, nil),
		chromedp.SendKeys(`#tools-search`, "no such tool", chromedp.ByQuery),
		chromedp.Poll(`document.querySelectorAll("#tools-list li.card").length === 0`, nil),
		chromedp.Evaluate(`document.querySelector("#tools-search").value = ""`, nil),
		chromedp.Evaluate(`document.querySelector("#tools-search").dispatchEvent(new Event("input"))`, nil),
		chromedp.Poll(`document.querySelectorAll("#tools-list li.card").length > 2`, nil),
	)
	byName := order()
	if len(byName) < 3 || !isSorted(byName) {
		t.Errorf("by name: %v", byName)
	}

	// Load Thumb as text: its call, every parameter filled, waits in the
	// Parser pane and runs.
	var text, ran string
	run("load as text",
		chromedp.Click(`#tool-Thumb-text`, chromedp.ByQuery),
		chromedp.WaitVisible(`#parse-run-0`, chromedp.ByQuery),
		chromedp.Value(`#parse-text`, &text, chromedp.ByQuery),
		chromedp.Click(`#parse-run-0`, chromedp.ByQuery),
		chromedp.WaitVisible(`#parse-result .result`, chromedp.ByQuery),
		chromedp.Text(`#parse-result .result`, &ran, chromedp.ByQuery),
	)
	if !strings.Contains(text, "tool_name:「始」Thumb「末」") || !strings.Contains(text, "format:「始」png「末」") {
		t.Errorf("loaded call:\n%s", text)
	}
	if !strings.Contains(ran, "ok") || !strings.Contains(ran, `"path": "<path>"`) || !strings.Contains(ran, `"size": 1`) {
		t.Errorf("the loaded call ran:\n%s", ran)
	}
	// Thumb, called once, now leads "most called" and "recently used".
	for _, by := range []string{"calls", "recent"} {
		run("order by "+by,
			chromedp.Navigate(base+"/#tools"),
			// The page keeps its last list until the new one arrives.
			chromedp.Poll(`document.querySelector("#tool-Thumb-facts")?.textContent.includes("1 call,")`, nil),
			chromedp.SetValue(`#tools-sort`, by, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelector("#tools-sort").dispatchEvent(new Event("change"))`, nil),
		)
		if ids := order(); len(ids) == 0 || ids[0] != "tool-Thumb" {
			t.Errorf("order by %s: %v", by, ids)
		}
	}
	// A card opened just before the list is drawn again (a refresh, a new
	// order) stays open.
	var stillOpen bool
	run("order by kind", chromedp.Click(`#tool-Files details summary`, chromedp.ByQuery),
		chromedp.SetValue(`#tools-sort`, "source", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#tools-sort").dispatchEvent(new Event("change"))`, nil),
		chromedp.Evaluate(`document.querySelector("#tool-Files > details").open`, &stillOpen),
		chromedp.Click(`#tool-Files details summary`, chromedp.ByQuery))
	if ids := order(); len(ids) == 0 || ids[len(ids)-1] != "tool-Thumb" {
		t.Errorf("order by kind (built-in tools first, Thumb is a test source): %v", ids)
	}
	if !stillOpen {
		t.Error("the Files card's commands, opened, closed when the list was drawn again")
	}

	// Load Thumb into the executor: the Executor opens with Thumb chosen
	// and its form filled with the example values, and runs it.
	var tool, path, size, format, byForm string
	run("load into executor",
		chromedp.Click(`#tool-Thumb-load`, chromedp.ByQuery),
		chromedp.WaitVisible(`#page-executor`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#param-path")?.value !== ""`, nil),
		chromedp.Value(`#exec-tool`, &tool, chromedp.ByQuery),
		chromedp.Value(`#param-path`, &path, chromedp.ByQuery),
		chromedp.Value(`#param-size`, &size, chromedp.ByQuery),
		chromedp.Value(`#param-format`, &format, chromedp.ByQuery),
		chromedp.Click(`#exec-run`, chromedp.ByQuery),
		chromedp.WaitVisible(`#exec-result .result`, chromedp.ByQuery),
		chromedp.Text(`#exec-result .result`, &byForm, chromedp.ByQuery),
	)
	if tool != "Thumb" || path != "<path>" || size != "1" || format != `"png"` {
		t.Errorf("executor form: tool %q, path %q, size %q, format %q", tool, path, size, format)
	}
	if !strings.Contains(byForm, "ok") || !strings.Contains(byForm, `"size": 1`) || !strings.Contains(byForm, `"format": "png"`) {
		t.Errorf("the call from the executor's form:\n%s", byForm)
	}

	run("order by commands", chromedp.SetValue(`#tools-sort`, "commands", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#tools-sort").dispatchEvent(new Event("change"))`, nil))
	if ids := order(); len(ids) == 0 || ids[0] != "tool-Files" {
		t.Errorf("order by commands (Files has two): %v", ids)
	}

	// A command of a multi-command tool loads on its own, both ways;
	// Files' commands have no schema.
	var filesCall, did string
	run("load a command as text",
		chromedp.Navigate(base+"/#tools"),
		chromedp.WaitVisible(`#tool-Files details summary`, chromedp.ByQuery),
		chromedp.Click(`#tool-Files details summary`, chromedp.ByQuery),
		chromedp.Click(`#tool-Files-cmd-1-text`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#parse-text").value.includes("delete")`, nil),
		chromedp.WaitVisible(`#parse-run-0`, chromedp.ByQuery),
		chromedp.Value(`#parse-text`, &filesCall, chromedp.ByQuery),
		chromedp.Click(`#parse-run-0`, chromedp.ByQuery),
		chromedp.WaitVisible(`#parse-result .result`, chromedp.ByQuery),
		chromedp.Text(`#parse-result .result`, &did, chromedp.ByQuery),
		chromedp.Navigate(base+"/#tools"),
		chromedp.Poll(`document.querySelector("#tool-Files-facts")?.textContent.includes("1 call,")`, nil),
	)
	if filesCall != "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Files「末」\ncommand:「始」delete「末」\n<<<[END_TOOL_REQUEST]>>>" || !strings.Contains(did, "did delete") {
		t.Errorf("Files delete loaded as %q, ran %q", filesCall, did)
	}
	var strayNull bool
	run("the parser writes no stray text",
		chromedp.Navigate(base+"/#parser"),
		chromedp.Evaluate(`[...document.querySelector("#parse-result").childNodes].some((n) => n.nodeType === Node.TEXT_NODE)`, &strayNull))
	if strayNull {
		t.Error("the Parser's result has a bare text node (a null written as text)")
	}
	filesRaw := loadUntyped(t, run, base, "Files", `#tool-Files-cmd-1-load`, "did delete")
	if filesRaw != `{"command":"delete"}` {
		t.Errorf("Files delete loaded into the executor as %s", filesRaw)
	}

	// A plugin command with only a description that shows its call form:
	// both loads carry the call's parameters, not the command's identifier.
	var calcCall, calcRan string
	run("load a described command as text",
		chromedp.Navigate(base+"/#tools"),
		chromedp.WaitVisible(`#tool-Calc-text`, chromedp.ByQuery),
		chromedp.Click(`#tool-Calc-text`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#parse-text").value.includes("Calc")`, nil),
		chromedp.WaitVisible(`#parse-run-0`, chromedp.ByQuery),
		chromedp.Value(`#parse-text`, &calcCall, chromedp.ByQuery),
		chromedp.Click(`#parse-run-0`, chromedp.ByQuery),
		chromedp.WaitVisible(`#parse-result .result`, chromedp.ByQuery),
		chromedp.Text(`#parse-result .result`, &calcRan, chromedp.ByQuery),
	)
	if calcCall != "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Calc「末」\nexpression:「始」1+1「末」\n<<<[END_TOOL_REQUEST]>>>" || !strings.Contains(calcRan, "computed 1+1") {
		t.Errorf("Calc loaded as %q, ran %q", calcCall, calcRan)
	}
	if raw := loadUntyped(t, run, base, "Calc", `#tool-Calc-load`, "computed 1+1"); raw != `{"expression":"1+1"}` {
		t.Errorf("Calc loaded into the executor as %s", raw)
	}
	run("back to the tools", chromedp.Navigate(base+"/#tools"), chromedp.WaitVisible(`#tool-Thumb-timeout`, chromedp.ByQuery))

	// A timeout out of range is refused with the rule, and nothing changes.
	var refused, facts string
	run("refused timeout",
		chromedp.SetValue(`#tool-Thumb-timeout`, "-5s", chromedp.ByQuery),
		chromedp.Click(`#tool-Thumb-timeout-set`, chromedp.ByQuery),
		chromedp.WaitVisible(`#tools-error`, chromedp.ByQuery),
		chromedp.Text(`#tools-error`, &refused, chromedp.ByQuery),
	)
	if !strings.Contains(refused, "must be between 1s and") {
		t.Errorf("refused timeout says %q", refused)
	}
	run("empty timeout",
		chromedp.SetValue(`#tool-Thumb-timeout`, " ", chromedp.ByQuery),
		chromedp.Click(`#tool-Thumb-timeout-set`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#tools-error").textContent.includes("write a timeout")`, nil),
	)
	// 45s is told to the server (the node reconnects) and shown.
	run("set a timeout",
		chromedp.SetValue(`#tool-Thumb-timeout`, "45s", chromedp.ByQuery),
		chromedp.Click(`#tool-Thumb-timeout-set`, chromedp.ByQuery),
		chromedp.WaitVisible(`#tool-Thumb-timeout-default`, chromedp.ByQuery),
		chromedp.Text(`#tool-Thumb-facts`, &facts, chromedp.ByQuery),
	)
	if !strings.Contains(facts, "timeout 45s (set here)") {
		t.Errorf("Thumb's facts after the timeout: %q", facts)
	}
	h.WaitGone(conn)
	conn = h.Accept()
	if _, m := h.Registered(conn); timeoutMs(m["Thumb"]) != 45000 {
		t.Errorf("Thumb registered with %v after the timeout", m["Thumb"])
	}
	run("default timeout",
		chromedp.Click(`#tool-Thumb-timeout-default`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`#tool-Thumb-timeout-default`, chromedp.ByQuery),
		chromedp.Text(`#tool-Thumb-facts`, &facts, chromedp.ByQuery),
	)
	if strings.Contains(facts, "set here") {
		t.Errorf("Thumb's facts after Default: %q", facts)
	}
	h.WaitGone(conn)
	if _, m := h.Registered(h.Accept()); timeoutMs(m["Thumb"]) == 45000 {
		t.Errorf("Thumb registered with %v after Default", m["Thumb"])
	}
}

func isSorted(ids []string) bool {
	for i := 1; i < len(ids); i++ {
		if strings.ToLower(ids[i-1]) > strings.ToLower(ids[i]) {
			return false
		}
	}
	return true
}

// loadUntyped presses a load button of a tool without a schema on the
// Tools page, checks the Executor shows the call's values as JSON (there
// is no form to fill) and runs it, wanting ran in the result; it returns
// the JSON, compacted.
func loadUntyped(t *testing.T, run func(string, ...chromedp.Action), base, tool, button, ran string) string {
	t.Helper()
	var chosen, raw, result string
	var rawShown bool
	run("load "+tool+" into the executor",
		chromedp.Evaluate(`document.querySelector("#exec-raw").value = ""`, nil),
		chromedp.Navigate(base+"/#tools"),
		// A command's button is inside its closed details: pressed by script.
		chromedp.Poll(`!!document.querySelector("`+button+`")`, nil),
		chromedp.Evaluate(`document.querySelector("`+button+`").click()`, nil),
		chromedp.WaitVisible(`#page-executor`, chromedp.ByQuery),
		chromedp.Poll(`document.querySelector("#exec-raw").value !== ""`, nil),
		chromedp.Value(`#exec-tool`, &chosen, chromedp.ByQuery),
		chromedp.Value(`#exec-raw`, &raw, chromedp.ByQuery),
		chromedp.Evaluate(`!document.querySelector("#exec-raw-field").hidden && document.querySelector("#exec-raw-toggle").checked`, &rawShown),
		chromedp.Click(`#exec-run`, chromedp.ByQuery),
		chromedp.WaitVisible(`#exec-result .result`, chromedp.ByQuery),
		chromedp.Text(`#exec-result .result`, &result, chromedp.ByQuery),
	)
	if chosen != tool || !rawShown || !strings.Contains(result, ran) {
		t.Errorf("%s in the executor: tool %q, JSON shown %v, ran %q", tool, chosen, rawShown, result)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(raw)); err != nil {
		t.Errorf("%s in the executor: %q is no JSON: %v", tool, raw, err)
	}
	return compact.String()
}

// timeoutMs is a registered manifest's communication.timeout.
func timeoutMs(m map[string]any) float64 {
	comm, _ := m["communication"].(map[string]any)
	ms, _ := comm["timeout"].(float64)
	return ms
}
