package node

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
)

// askAtOwnTimeout is a config whose "ask" tool would wait for the owner
// (2 minutes by default) longer than the plugin's own 5 s timeout lets a
// call live.
func askAtOwnTimeout(cfg config.Config, dir string) config.Config {
	cfg.Plugins.Dirs = []string{dir}
	cfg.Tools = map[string]config.ToolConfig{"Answer": {Approval: "ask"}}
	return cfg
}

const askWindowProblem = "tools.Answer.approval: approval_timeout (default) 2m is not below the tool's own timeout 5s (from its manifest)"

// One rule, one verdict: an approval window the plugin's own timeout cuts
// short refuses the config at start and at reload alike, in the words of
// `config check` (which uses ConfigProblems too).
func TestApprovalWindowRefusedAtStartAndReload(t *testing.T) {
	dir := t.TempDir()
	writePlugin(t, dir, "Answer", syncManifest("Answer", "answers"), map[string]string{"answer.sh": answerScript})

	cfg := config.Default()
	cfg.Hub.Key = testKey
	cfg.Plugins.StateDir = t.TempDir()
	n, err := New(askAtOwnTimeout(cfg, dir), zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), askWindowProblem) {
		t.Errorf("New = %v\nwant an error with: %s", err, askWindowProblem)
	}
	if n != nil {
		t.Error("New returned a node with its error")
	}

	h := startHarness(t, harnessOpt{})
	h.accept()
	bad := askAtOwnTimeout(h.cfg, dir)
	if _, err := h.node.Reload(bad); err == nil || !strings.Contains(err.Error(), askWindowProblem) || !strings.Contains(err.Error(), "old one stays in force") {
		t.Errorf("Reload = %v\nwant a refusal with: %s", err, askWindowProblem)
	}
	// A window below the deadline is accepted.
	ok := bad
	ok.Tools = map[string]config.ToolConfig{"Answer": {Approval: "ask", ApprovalTimeout: config.Duration(4e9)}}
	if _, err := h.node.Reload(ok); err != nil {
		t.Errorf("Reload with a 4s window: %v", err)
	}
}

// Names that match no tool are warned about at reload (and logged at
// start, from the same list), with the closest name.
func TestUnknownToolNamesWarnAtReload(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	h.accept()
	cfg := h.cfg
	cfg.Node.ExposedTools = []string{"Echo", "NodeInfp"}
	cfg.Node.HiddenTools = []string{"NoSuchToolAtAll"}
	cfg.Tools = map[string]config.ToolConfig{"echo": {Timeout: config.Duration(5e9)},
		"vcp_ScheduleManager": {Timeout: config.Duration(5e9)}} // the server's tool: not this node's to judge
	rep, err := h.node.Reload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`[tools.echo] names no tool this node hosts (did you mean "Echo"?)`,
		`node.exposed_tools: "NodeInfp" names no tool this node hosts (did you mean "NodeInfo"?); a non-empty exposed_tools hides every tool it does not name`,
		`node.hidden_tools: "NoSuchToolAtAll" names no tool this node hosts (known: `,
	} {
		if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
			t.Errorf("warnings %q\nwant one starting with: %s", rep.Warnings, want)
		}
	}
	if slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "vcp_ScheduleManager") }) {
		t.Errorf("warnings %q name [tools.vcp_ScheduleManager], a server tool's table", rep.Warnings)
	}
}

// An "ask" tool without a timeout of its own or the config's gets the
// default per-call timeout, which cuts the 2 minute wait: the tools list
// shows the window a call really gets.
func TestToolsShowTheEffectiveApprovalWindow(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Tools = map[string]config.ToolConfig{"Echo": {Approval: "ask"}}
	}})
	for _, ts := range h.node.ToolStatuses().Tools {
		if ts.Name == "Echo" && (ts.ApprovalTimeoutMs != toolhost.DefaultTimeout.Milliseconds() || ts.TimeoutMs != ts.ApprovalTimeoutMs) {
			t.Errorf("Echo: approval window %d ms, timeout %d ms; want both %d ms", ts.ApprovalTimeoutMs, ts.TimeoutMs, toolhost.DefaultTimeout.Milliseconds())
		}
	}
}

// An "ask" tool that sets no timeout anywhere is cut to the default
// per-call timeout before its approval wait ends: a reload (and `config
// check`, from the same list) warns, naming both ways out; a timeout set
// for it, or a wait below the default, says nothing.
func TestApprovalWindowCutByTheDefaultTimeoutWarns(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	h.accept()
	const want = `tools.Echo.approval: approval_timeout (default) 2m is cut to less than 1m: the tool sets no timeout of its own, ` +
		`so its calls end at the default 1m while the owner is still asked; set [tools.Echo] timeout above 2m (the wait, then the run), or approval_timeout below 1m`
	for _, c := range []struct {
		name string
		tool config.ToolConfig
		warn bool
	}{
		{"no timeout", config.ToolConfig{Approval: "ask"}, true},
		{"a command asks", config.ToolConfig{Commands: map[string]config.ToolCommandConfig{"x": {Approval: "ask"}}}, true},
		{"its own timeout", config.ToolConfig{Approval: "ask", Timeout: config.Duration(3 * time.Minute)}, false},
		{"a short wait", config.ToolConfig{Approval: "ask", ApprovalTimeout: config.Duration(30 * time.Second)}, false},
		{"auto", config.ToolConfig{}, false},
	} {
		cfg := h.cfg
		cfg.Tools = map[string]config.ToolConfig{"Echo": c.tool}
		rep, err := h.node.Reload(cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		cut := slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "is cut to less than") })
		if cut != c.warn || c.warn && !slices.Contains(rep.Warnings, want) {
			t.Errorf("%s: warnings %q\nwant the cut warned: %t", c.name, rep.Warnings, c.warn)
		}
	}
}
