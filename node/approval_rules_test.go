package node

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// approvalHarness runs a node whose Echo and Files ask, keeping its state
// (the rules file) in state.
func approvalHarness(t *testing.T, state string, more func(*config.Config)) (*harness, *controlapi.ControlClient) {
	t.Helper()
	h := startHarness(t, harnessOpt{tools: []toolhost.Tool{testtool.Files{}}, config: func(c *config.Config) {
		c.Plugins.StateDir = state
		c.Node.ExposedTools = []string{"Echo", "Files"}
		c.Tools = map[string]config.ToolConfig{"Echo": {Approval: "ask"}, "Files": {Approval: "ask"}}
		if more != nil {
			more(c)
		}
	}})
	_, client := startControl(t, h, "")
	return h, client
}

// runsUnasked calls tool and checks it ran without being held.
func runsUnasked(t *testing.T, h *harness, res wsproto.ToolResult, want string) {
	t.Helper()
	if res.Status != wsproto.StatusSuccess || !strings.Contains(firstText(t, res), want) {
		t.Fatalf("result = %+v, want success with %q", res, want)
	}
	if n := h.node.Approvals().Len(); n != 0 {
		t.Fatalf("%d calls pending", n)
	}
}

// approve --always on a held call remembers the answer in the state
// directory: the next call runs unasked, in this run and after a restart;
// forgetting the rule asks again.
func TestApproveAlwaysThroughTheHub(t *testing.T) {
	state := t.TempDir()
	h, client := approvalHarness(t, state, nil)
	conn := h.accept()
	first := asyncCall(h, conn, "r-1", "Echo", map[string]string{"message": "one"})
	p := h.waitPending(1)[0]
	res, err := client.DecideWith(h.ctx, p.ID, true, controlapi.DecisionRequest{Always: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rule == nil || res.Rule.ID != "Echo" || res.Rule.Verdict != controlapi.RuleAllow || res.Approval.RequestID != "r-1" {
		t.Fatalf("approve --always = %+v", res)
	}
	runsUnasked(t, h, waitResult(h, first), "one")
	runsUnasked(t, h, h.call(conn, "Echo", map[string]any{"message": "two"}), "two")
	h.waitLog(`"approval":"remembered"`)
	data, err := os.ReadFile(filepath.Join(state, config.ApprovalRulesFile))
	if err != nil || !strings.Contains(string(data), `"verdict": "allow"`) {
		t.Fatalf("rules file: %s, %v", data, err)
	}
	if err := h.shutdown(); err != nil {
		t.Fatal(err)
	}

	// A restart: a new node over the same state directory.
	h2, client2 := approvalHarness(t, state, nil)
	conn2 := h2.accept()
	runsUnasked(t, h2, h2.call(conn2, "Echo", map[string]any{"message": "three"}), "three")
	list, err := client2.ApprovalRules(h2.ctx)
	if err != nil || len(list.Rules) != 1 || list.Rules[0].ID != "Echo" || list.File != filepath.Join(state, config.ApprovalRulesFile) || list.Error != "" {
		t.Fatalf("rules after the restart = %+v, %v", list, err)
	}

	// Forgotten, Echo asks again.
	if f, err := client2.ForgetRule(h2.ctx, "Echo"); err != nil || f.Rule.ID != "Echo" {
		t.Fatalf("forget = %+v, %v", f, err)
	}
	held := asyncCall(h2, conn2, "r-4", "Echo", map[string]string{"message": "four"})
	p = h2.waitPending(1)[0]
	if _, err := client2.Decide(h2.ctx, p.ID, false, "asked again"); err != nil {
		t.Fatal(err)
	}
	if res := waitResult(h2, held); res.Error != `tool "Echo" denied by the node's owner: asked again` {
		t.Errorf("result = %+v", res)
	}
	var api *controlapi.APIError
	if _, err := client2.ForgetRule(h2.ctx, "Echo"); !errors.As(err, &api) || api.Status != http.StatusNotFound ||
		!strings.Contains(api.Message, `no approval rule with this id: "Echo" (there are none`) {
		t.Errorf("forgetting an unknown rule = %v", err)
	}
}

// A rule made from a call with a command covers that command only; deny
// --always refuses later calls with its reason, also after a restart; the
// server's own approvals cannot be remembered.
func TestAlwaysRulesPerCommand(t *testing.T) {
	state := t.TempDir()
	h, client := approvalHarness(t, state, nil)
	conn := h.accept()
	callFiles := func(id, cmd string) <-chan wsproto.ToolResult {
		return asyncCall(h, conn, id, "Files", map[string]string{"command": cmd})
	}
	read := callFiles("r-1", "read")
	p := h.waitPending(1)[0]
	if p.Command != "read" {
		t.Fatalf("pending = %+v, want command read", p)
	}
	if res, err := client.DecideWith(h.ctx, p.ID, true, controlapi.DecisionRequest{Always: true}); err != nil || res.Rule.ID != "Files/read" {
		t.Fatalf("approve --always = %+v, %v", res, err)
	}
	runsUnasked(t, h, waitResult(h, read), "did read")
	runsUnasked(t, h, waitResult(h, callFiles("r-2", "read")), "did read")

	del := callFiles("r-3", "delete")
	p = h.waitPending(1)[0]
	res, err := client.DecideWith(h.ctx, p.ID, false, controlapi.DecisionRequest{Always: true, Reason: "never here"})
	if err != nil || res.Rule.ID != "Files/delete" || res.Rule.Verdict != controlapi.RuleDeny {
		t.Fatalf("deny --always = %+v, %v", res, err)
	}
	if res := waitResult(h, del); res.Error != `tool "Files" denied by the node's owner: never here` {
		t.Errorf("denied call = %+v", res)
	}
	if res := waitResult(h, callFiles("r-4", "delete")); res.Error != `tool "Files" refused by the node's owner: never here` {
		t.Errorf("call under a deny rule = %+v", res)
	}
	// Echo has no rule: it still asks.
	echo := asyncCall(h, conn, "r-5", "Echo", nil)
	p = h.waitPending(1)[0]
	client.Decide(h.ctx, p.ID, true, "")
	waitResult(h, echo)

	var api *controlapi.APIError
	if _, err := client.DecideWith(h.ctx, "approve-1-1", true, controlapi.DecisionRequest{Always: true}); !errors.As(err, &api) ||
		api.Status != http.StatusBadRequest || !strings.Contains(api.Message, "the server's approvals are answered one at a time") {
		t.Errorf("--always on a server approval = %v", err)
	}
	if _, err := client.DecideWith(h.ctx, "99", true, controlapi.DecisionRequest{Always: true}); !errors.As(err, &api) || api.Status != http.StatusNotFound {
		t.Errorf("--always on no pending call = %v", err)
	}
	if list, _ := client.ApprovalRules(h.ctx); len(list.Rules) != 2 {
		t.Errorf("rules = %+v, want two (a failed --always remembers nothing)", list.Rules)
	}

	// A restart over the same state directory keeps both command rules;
	// a call of the tool that selects no command still asks.
	if err := h.shutdown(); err != nil {
		t.Fatal(err)
	}
	h2, client2 := approvalHarness(t, state, nil)
	conn2 := h2.accept()
	runsUnasked(t, h2, waitResult(h2, asyncCall(h2, conn2, "r-6", "Files", map[string]string{"command": "read"})), "did read")
	if res := waitResult(h2, asyncCall(h2, conn2, "r-7", "Files", map[string]string{"command": "delete"})); res.Error != `tool "Files" refused by the node's owner: never here` {
		t.Errorf("a denied command after the restart = %+v", res)
	}
	other := asyncCall(h2, conn2, "r-8", "Files", nil) // no command: the tool's own setting, ask
	p = h2.waitPending(1)[0]
	client2.Decide(h2.ctx, p.ID, true, "")
	waitResult(h2, other)
}

// [tools.NAME.commands.CMD] approval sets one command apart from its
// tool; a deny setting wins over an allow rule.
func TestCommandApprovalSetting(t *testing.T) {
	state := t.TempDir()
	rules := `{"rules": [{"tool": "Files", "verdict": "allow"}]}`
	if err := os.WriteFile(filepath.Join(state, config.ApprovalRulesFile), []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	h, _ := approvalHarness(t, state, func(c *config.Config) {
		c.Tools["Files"] = config.ToolConfig{Approval: "ask", Commands: map[string]config.ToolCommandConfig{"delete": {Approval: "deny"}}}
		c.Tools["Echo"] = config.ToolConfig{Commands: map[string]config.ToolCommandConfig{"Echo": {Approval: "deny"}}}
	})
	conn := h.accept()
	runsUnasked(t, h, h.call(conn, "Files", map[string]any{"command": "read"}), "did read")
	if res := h.call(conn, "Files", map[string]any{"command": "Delete"}); res.Error != `tool "Files" refused by the node's owner` {
		t.Errorf("delete = %+v", res)
	}
	// Echo has no named commands: a commands table cannot touch it.
	runsUnasked(t, h, h.call(conn, "Echo", map[string]any{"message": "hi"}), "hi")
}

// A rules file that cannot be read is reported, kept byte for byte, and
// never overwritten: --always is refused (the call stays pending, so a
// plain answer still works), and a reload after the fix reads it.
func TestCorruptRulesFileLosesNothing(t *testing.T) {
	state := t.TempDir()
	path := filepath.Join(state, config.ApprovalRulesFile)
	corrupt := []byte(`{"rules": [{"tool": "Echo", "verdict": "allow"},` + "\n")
	if err := os.WriteFile(path, corrupt, 0o600); err != nil {
		t.Fatal(err)
	}
	h, client := approvalHarness(t, state, nil)
	conn := h.accept()
	h.waitLog("approval rules not read")
	held := asyncCall(h, conn, "r-1", "Echo", nil)
	p := h.waitPending(1)[0]
	var api *controlapi.APIError
	_, err := client.DecideWith(h.ctx, p.ID, true, controlapi.DecisionRequest{Always: true})
	if !errors.As(err, &api) || api.Status != http.StatusConflict || !strings.Contains(api.Message, "approval rules "+path) ||
		!strings.Contains(api.Message, "the file is kept as it is") {
		t.Fatalf("--always with a corrupt file = %v", err)
	}
	list, err := client.ApprovalRules(h.ctx)
	if err != nil || list.Error == "" || len(list.Rules) != 0 {
		t.Errorf("rules = %+v, %v", list, err)
	}
	if _, err := client.ForgetRule(h.ctx, "Echo"); !errors.As(err, &api) || api.Status != http.StatusConflict {
		t.Errorf("forget with a corrupt file = %v", err)
	}
	if _, err := client.Decide(h.ctx, p.ID, true, ""); err != nil {
		t.Fatalf("plain approve after a refused --always: %v", err)
	}
	waitResult(h, held)
	if data, _ := os.ReadFile(path); !bytes.Equal(data, corrupt) {
		t.Fatalf("the corrupt file changed:\n%s", data)
	}

	// Fixed by hand, then reloaded: its rule is in force.
	if err := os.WriteFile(path, append(corrupt[:len(corrupt)-2], ']', '}'), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.node.Reload(h.cfg); err != nil {
		t.Fatal(err)
	}
	if list, _ := client.ApprovalRules(h.ctx); list.Error != "" || len(list.Rules) != 1 {
		t.Fatalf("rules after the fix = %+v", list)
	}
	runsUnasked(t, h, h.call(conn, "Echo", map[string]any{"message": "fixed"}), "fixed")
}
