package toolconfig

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
)

// TestApprovalVocabulary: config checks the approval modes and applies the
// default wait the dispatcher applies; the two lists are one vocabulary.
func TestApprovalVocabulary(t *testing.T) {
	var modes []string
	for _, m := range toolhost.ApprovalModes {
		modes = append(modes, string(m))
	}
	if !slices.Equal(modes, config.ApprovalModes) {
		t.Errorf("config.ApprovalModes = %q, toolhost.ApprovalModes = %q", config.ApprovalModes, modes)
	}
	if config.DefaultApprovalTimeout != toolhost.DefaultApprovalTimeout {
		t.Errorf("config.DefaultApprovalTimeout = %s, toolhost's = %s", config.DefaultApprovalTimeout, toolhost.DefaultApprovalTimeout)
	}
}

func TestPolicyCarriesApproval(t *testing.T) {
	cfg := config.Default()
	cfg.Tools = map[string]config.ToolConfig{
		"A": {Approval: "ask", ApprovalTimeout: config.Duration(30 * time.Second)},
		"B": {Approval: "deny"},
		"C": {},
	}
	pol := Policy(cfg)
	tests := []struct {
		tool string
		mode toolhost.ApprovalMode
		wait time.Duration
	}{
		{"A", toolhost.ApprovalAsk, 30 * time.Second},
		{"B", toolhost.ApprovalDeny, toolhost.DefaultApprovalTimeout},
		{"C", toolhost.ApprovalAuto, toolhost.DefaultApprovalTimeout},
	}
	for _, tt := range tests {
		if mode, wait := pol.Approval(toolhost.Spec{Name: tt.tool}); mode != tt.mode || wait != tt.wait {
			t.Errorf("%s: %s %s, want %s %s", tt.tool, mode, wait, tt.mode, tt.wait)
		}
	}
}

func TestPolicyCarriesCommandApproval(t *testing.T) {
	cfg, err := config.Parse([]byte("[tools.Files]\napproval = \"ask\"\n[tools.Files.commands.delete]\napproval = \"deny\"\n"), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	o := Policy(cfg).Tools["Files"]
	if o.Approval != toolhost.ApprovalAsk || len(o.Commands) != 1 || o.Commands["delete"] != toolhost.ApprovalDeny {
		t.Errorf("policy = %+v", o)
	}
}

func TestPolicyMirrorsConfig(t *testing.T) {
	no := false
	c := config.Default()
	c.Node.ExposedTools = []string{"A", "B"}
	c.Node.HiddenTools = []string{"C"}
	c.Tools = map[string]config.ToolConfig{"A": {Expose: &no, Timeout: config.Duration(3 * time.Second), MaxConcurrent: 2}}
	p := Policy(c)
	if fmt.Sprint(p.ExposedTools, p.HiddenTools) != "[A B] [C]" {
		t.Errorf("lists = %v %v", p.ExposedTools, p.HiddenTools)
	}
	o := p.Tools["A"]
	if o.Expose == nil || *o.Expose || o.Timeout != 3*time.Second || o.MaxConcurrent != 2 {
		t.Errorf("override A = %+v", o)
	}
	p.ExposedTools[0] = "Z"
	if c.Node.ExposedTools[0] != "A" {
		t.Error("Policy() shares its slices with the config")
	}
}
