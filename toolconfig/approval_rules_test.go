package toolconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
)

func TestApprovalRulesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", config.ApprovalRulesFile)
	if rs, err := LoadApprovalRules(path); err != nil || rs != nil {
		t.Fatalf("missing file = %v, %v", rs, err)
	}
	want := toolhost.ApprovalRules{
		{Tool: "Echo", Verdict: toolhost.RuleAllow, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Tool: "Files", Command: "delete", Verdict: toolhost.RuleDeny, Reason: "never"},
	}
	if err := SaveApprovalRules(path, want); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved file: %v, %v", fi, err)
	}
	got, err := LoadApprovalRules(path)
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("loaded %+v, %v", got, err)
	}
	if lines := DescribeApprovalRules(got); strings.Join(lines, "|") != "allow Echo|deny Files/delete: never" {
		t.Errorf("described: %q", lines)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	for name, doc := range map[string]string{
		"not JSON":       `{"rules": [`,
		"trailing data":  `{"rules": []} {"rules": []}`,
		"unknown field":  `{"rules": [{"tool": "Echo", "verdict": "allow", "always": true}]}`,
		"bad verdict":    `{"rules": [{"tool": "Echo", "verdict": "maybe"}]}`,
		"no tool":        `{"rules": [{"verdict": "allow"}]}`,
		"two for a tool": `{"rules": [{"tool": "Echo", "verdict": "allow"}, {"tool": "Echo", "verdict": "deny"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), config.ApprovalRulesFile)
			os.WriteFile(p, []byte(doc), 0o600)
			_, err := LoadApprovalRules(p)
			if err == nil || !strings.Contains(err.Error(), "approval rules "+p+": ") || !strings.Contains(err.Error(), "the file is kept as it is") {
				t.Errorf("LoadApprovalRules = %v", err)
			}
		})
	}
}
