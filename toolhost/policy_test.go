package toolhost

import (
	"testing"
	"time"
)

func TestPolicyDecide(t *testing.T) {
	yes, no := true, false
	plugin := Spec{Name: "Plugin", DistributedExposed: true}
	private := Spec{Name: "Private", DistributedExposed: false}
	builtin := Spec{Name: "Echo", Builtin: true, DistributedExposed: true}
	implicit := Spec{Name: "internal_request_file", Builtin: true, Implicit: true}

	tests := []struct {
		name   string
		policy Policy
		spec   Spec
		want   Exposure
	}{
		{"plugin exposed by default", Policy{}, plugin,
			Exposure{true, "plugins are exposed by default (exposed_tools is empty)"}},
		{"plugin listed", Policy{ExposedTools: []string{"Plugin"}}, plugin,
			Exposure{true, "listed in exposed_tools"}},
		{"plugin not listed", Policy{ExposedTools: []string{"Other"}}, plugin,
			Exposure{false, "not listed in exposed_tools"}},
		{"hidden wins over listed", Policy{ExposedTools: []string{"Plugin"}, HiddenTools: []string{"Plugin"}}, plugin,
			Exposure{false, "hidden by hidden_tools"}},
		{"hidden wins over override", Policy{HiddenTools: []string{"Plugin"}, Tools: map[string]ToolOverride{"Plugin": {Expose: &yes}}}, plugin,
			Exposure{false, "hidden by hidden_tools"}},
		{"override hides", Policy{Tools: map[string]ToolOverride{"Plugin": {Expose: &no}}}, plugin,
			Exposure{false, "[tools.Plugin] expose = false"}},
		{"override without expose changes nothing", Policy{Tools: map[string]ToolOverride{"Plugin": {Timeout: time.Second}}}, plugin,
			Exposure{true, "plugins are exposed by default (exposed_tools is empty)"}},
		{"manifest opts out", Policy{}, private,
			Exposure{false, "manifest says distributedExposed: false"}},
		{"manifest opt-out beats exposed_tools", Policy{ExposedTools: []string{"Private"}}, private,
			Exposure{false, "manifest says distributedExposed: false"}},
		{"override beats manifest opt-out", Policy{Tools: map[string]ToolOverride{"Private": {Expose: &yes}}}, private,
			Exposure{true, "[tools.Private] expose = true"}},
		{"builtin hidden by default", Policy{}, builtin,
			Exposure{false, "built-in tools are exposed only when the config names them (exposed_tools or [tools.Echo] expose = true)"}},
		{"builtin hidden when others listed", Policy{ExposedTools: []string{"Plugin"}}, builtin,
			Exposure{false, "built-in tools are exposed only when the config names them (exposed_tools or [tools.Echo] expose = true)"}},
		{"builtin named", Policy{ExposedTools: []string{"Echo"}}, builtin,
			Exposure{true, "built-in tool named in exposed_tools"}},
		{"builtin by override", Policy{Tools: map[string]ToolOverride{"Echo": {Expose: &yes}}}, builtin,
			Exposure{true, "[tools.Echo] expose = true"}},
		{"implicit always answers", Policy{ExposedTools: []string{"Plugin"}}, implicit,
			Exposure{true, "called by the server by name and never registered; the tool refuses calls itself when it is not configured"}},
		{"implicit can be hidden", Policy{HiddenTools: []string{"internal_request_file"}}, implicit,
			Exposure{false, "hidden by hidden_tools"}},
		{"names are case-sensitive", Policy{HiddenTools: []string{"plugin"}}, plugin,
			Exposure{true, "plugins are exposed by default (exposed_tools is empty)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.policy.Decide(tc.spec); got != tc.want {
				t.Fatalf("Decide = %+v\nwant       %+v", got, tc.want)
			}
		})
	}
}

func TestPolicyTimeoutAndLimit(t *testing.T) {
	pol := Policy{Tools: map[string]ToolOverride{
		"Over":     {Timeout: 5 * time.Second, MaxConcurrent: 2},
		"Negative": {MaxConcurrent: -3},
	}}
	tests := []struct {
		spec    Spec
		timeout time.Duration
		limit   int
	}{
		{Spec{Name: "Over", Timeout: time.Minute}, 5 * time.Second, 2},
		{Spec{Name: "Declared", Timeout: 2 * time.Minute}, 2 * time.Minute, 0},
		{Spec{Name: "Plain"}, DefaultTimeout, 0},
		{Spec{Name: "Negative", Timeout: -time.Second}, DefaultTimeout, 0},
	}
	for _, tc := range tests {
		if got := pol.Timeout(tc.spec); got != tc.timeout {
			t.Errorf("Timeout(%s) = %v, want %v", tc.spec.Name, got, tc.timeout)
		}
		if got := pol.MaxConcurrent(tc.spec.Name); got != tc.limit {
			t.Errorf("MaxConcurrent(%s) = %d, want %d", tc.spec.Name, got, tc.limit)
		}
	}
}
