package wsproto

import (
	"reflect"
	"testing"
)

// TestDecodeVCPManifestResponseAsTheServerSendsIt: the server passes its
// plugins' manifests through unchecked. Most of its invocation commands
// carry only commandIdentifier, and one plugin's odd field must not cost
// the node the whole list.
func TestDecodeVCPManifestResponseAsTheServerSendsIt(t *testing.T) {
	frame := `{"type":"vcp_manifest_response","data":{"requestId":"r1","vcpVersion":"1.0.0","plugins":[
		{"name":"SciCalculator","displayName":"科学计算器","description":"Computes.","version":"1.1.4",
		 "capabilities":{"invocationCommands":[{"commandIdentifier":"SciCalculatorRequest","description":"d","example":"e"}]}},
		{"name":"DailyNote","displayName":"日记","description":"","version":"1.0.0",
		 "capabilities":{"invocationCommands":[{"commandIdentifier":"create","description":"c","parameters":[{"name":"x"}]},
		                                       {"command":"update","commandIdentifier":"upd","description":"u"}]}},
		{"name":"Odd","displayName":["not","text"],"description":{"zh":"x"},"version":2,
		 "capabilities":{"invocationCommands":[{"command":"run","description":["a"],"example":null},"junk"]}},
		"junk"]}}`
	m, err := Decode([]byte(frame))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	got := m.(VCPManifestResponse).Plugins
	if len(got) != 4 {
		t.Fatalf("got %d plugins, want 4 (the junk entry decodes as a nameless one): %+v", len(got), got)
	}
	want := [][]VCPCommand{
		{{Command: "SciCalculatorRequest", Description: "d", Example: "e"}},
		{{Command: "create", Description: "c"}, {Command: "update", Description: "u"}},
		{{Command: "run"}, {}},
		nil,
	}
	for i, p := range got {
		if !reflect.DeepEqual(p.Capabilities.InvocationCommands, want[i]) {
			t.Errorf("plugin %d (%q) commands = %+v, want %+v", i, p.Name, p.Capabilities.InvocationCommands, want[i])
		}
	}
	if odd := got[2]; odd.Name != "Odd" || odd.DisplayName != "" || odd.Description != "" || odd.Version != "2" {
		t.Errorf("Odd = %+v, want its name, version \"2\" and the non-text fields empty", odd)
	}
	if got[3].Name != "" {
		t.Errorf("junk entry = %+v, want a nameless plugin", got[3])
	}
}
