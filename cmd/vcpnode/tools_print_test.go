package main

import (
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
)

// tools --all shows each tool's profile and what it got beyond it from
// what it runs, next to each other; the short listing keeps to the table.
func TestToolsAllShowsProfileAndDerivedGrants(t *testing.T) {
	tools := []controlapi.ToolStatus{
		{Name: "Diary", Exposed: true, Approval: "auto", Source: "plugin", Sandbox: "default",
			SandboxGrants: []controlapi.SandboxGrant{
				{Path: "/srv/vcp/node_modules", From: "node_modules"},
				{Path: "/home/u/.npm", Write: true, From: "npx cache"},
			}},
		{Name: "ReadFile", Exposed: true, Approval: "auto", Source: "builtin"},
	}
	var all strings.Builder
	if err := printTools(&all, tools, true); err != nil {
		t.Fatal(err)
	}
	want := "  Diary: default; also reads /srv/vcp/node_modules (node_modules), writes /home/u/.npm (npx cache)\n"
	if !strings.Contains(all.String(), "sandbox profiles:\n"+want) {
		t.Errorf("tools --all lacks the profile and grants line %q:\n%s", want, all.String())
	}
	if strings.Contains(all.String(), "ReadFile:") {
		t.Errorf("a built-in tool, which starts no process, got a sandbox line:\n%s", all.String())
	}
	var short strings.Builder
	if err := printTools(&short, tools, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(short.String(), "sandbox profiles") {
		t.Errorf("the short listing shows sandbox lines:\n%s", short.String())
	}
}
