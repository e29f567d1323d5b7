package toolhost

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestWireManifestGolden(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		timeout time.Duration
		want    string
	}{
		{
			name: "full plugin",
			spec: Spec{
				Name: "VideoGen", DisplayName: "Video generator", Version: "1.2.0",
				Description: "Generates short videos.",
				Commands: []Command{
					{Command: "Generate", Description: "Generate a video.\nParameters: prompt (string, required).", Example: "<<<[TOOL_REQUEST]>>>\ntool_name:「始」VideoGen「末」 & more"},
					{Command: "Status"}, // no description: sent anyway; the server leaves it out of the prompt
				},
				Timeout: 5 * time.Minute, Source: "/srv/plugins/Plugin/VideoGen/plugin-manifest.json",
				DistributedExposed: true,
				WebSocketPush:      &WebSocketPush{Enabled: true, MessageType: "video_done", TargetClientType: "VCPLog"},
			},
			timeout: 300 * time.Second,
			want: `{"manifestVersion":"1.0.0","name":"VideoGen","displayName":"Video generator","version":"1.2.0",` +
				`"description":"Generates short videos.","pluginType":"synchronous","entryPoint":{"type":"remote"},` +
				`"communication":{"protocol":"direct","timeout":300000},"capabilities":{"invocationCommands":[` +
				`{"command":"Generate","description":"Generate a video.\nParameters: prompt (string, required).","example":"<<<[TOOL_REQUEST]>>>\ntool_name:「始」VideoGen「末」 & more"},` +
				`{"command":"Status"}]},"webSocketPush":{"enabled":true,"messageType":"video_done","targetClientType":"VCPLog"}}`,
		},
		{
			name:    "minimal: displayName defaults to name, empty lists stay lists",
			spec:    Spec{Name: "Bare"},
			timeout: DefaultTimeout,
			want: `{"manifestVersion":"1.0.0","name":"Bare","displayName":"Bare","description":"","pluginType":"synchronous",` +
				`"entryPoint":{"type":"remote"},"communication":{"protocol":"direct","timeout":60000},"capabilities":{"invocationCommands":[]}}`,
		},
		{
			name:    "asynchronous plugin",
			spec:    Spec{Name: "Later", Asynchronous: true},
			timeout: DefaultTimeout,
			want: `{"manifestVersion":"1.0.0","name":"Later","displayName":"Later","description":"","pluginType":"asynchronous",` +
				`"entryPoint":{"type":"remote"},"communication":{"protocol":"direct","timeout":60000},"capabilities":{"invocationCommands":[]}}`,
		},
		{
			name:    "short timeout raised to 1s",
			spec:    Spec{Name: "Fast"},
			timeout: 200 * time.Millisecond,
			want: `{"manifestVersion":"1.0.0","name":"Fast","displayName":"Fast","description":"","pluginType":"synchronous",` +
				`"entryPoint":{"type":"remote"},"communication":{"protocol":"direct","timeout":1000},"capabilities":{"invocationCommands":[]}}`,
		},
		{
			name:    "huge timeout lowered to 2^31-1 ms",
			spec:    Spec{Name: "Slow"},
			timeout: 1000 * time.Hour,
			want: `{"manifestVersion":"1.0.0","name":"Slow","displayName":"Slow","description":"","pluginType":"synchronous",` +
				`"entryPoint":{"type":"remote"},"communication":{"protocol":"direct","timeout":2147483647},"capabilities":{"invocationCommands":[]}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := WireManifest(tc.spec, tc.timeout)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("manifest\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestWireManifestNeverLeaks(t *testing.T) {
	spec := Spec{
		Name: "P", DisplayName: "[云端] P", Source: "/home/me/secret/plugin-manifest.json",
		Commands:           []Command{{Command: "c", Description: "d", Example: "e"}},
		DistributedExposed: true, Builtin: true,
	}
	b, err := WireManifest(spec, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"basePath", "config", "configSchema", "pluginSpecificEnvConfig", "env", "Source", "source", "distributedExposed"} {
		if _, ok := m[key]; ok {
			t.Errorf("manifest has %q", key)
		}
	}
	if strings.Contains(string(b), "/home/me") {
		t.Errorf("manifest leaks the source path: %s", b)
	}
	if m["pluginType"] == "static" {
		t.Error("static pluginType sent")
	}
	entry := m["entryPoint"].(map[string]any)
	if len(entry) != 1 || entry["type"] != "remote" {
		t.Errorf("entryPoint = %v, want only type remote", entry)
	}
	// The server adds "[云端] " itself; a copy in the spec is dropped.
	if m["displayName"] != "P" {
		t.Errorf("displayName = %v", m["displayName"])
	}
	// The manifest is a copy: later changes to the spec's slices do not reach it.
	man := NewManifest(spec, time.Minute)
	spec.Commands[0].Description = "changed"
	if man.Capabilities.InvocationCommands[0].Description != "d" {
		t.Error("manifest shares the spec's command slice")
	}
}

func TestDispatcherManifestsAndTools(t *testing.T) {
	noop := func(context.Context, Call) (any, error) { return nil, nil }
	mk := func(s Spec) Tool { return funcTool{spec: s, fn: noop} }
	tools := []Tool{
		mk(Spec{Name: "Zeta", DistributedExposed: true, Timeout: 2 * time.Minute}),
		mk(Spec{Name: "Alpha", DistributedExposed: true}),
		mk(Spec{Name: "Private", DistributedExposed: false}),
		mk(Spec{Name: "Hidden", DistributedExposed: true}),
		mk(Spec{Name: "internal_request_file", Builtin: true, Implicit: true}),
		NewEchoTool(),
		NewSystemInfoTool(time.Now()),
	}
	pol := Policy{
		HiddenTools: []string{"Hidden"},
		Tools:       map[string]ToolOverride{"Alpha": {Timeout: 45 * time.Second, MaxConcurrent: 2}},
	}
	d := newTestDispatcher(t, pol, Limits{}, tools...)

	names := func() []string {
		ms, err := d.Manifests()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, raw := range ms {
			var m Manifest
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m.Name)
			if m.Name == "Alpha" && m.Communication.Timeout != 45000 {
				t.Errorf("Alpha timeout %d, want the override's 45000", m.Communication.Timeout)
			}
		}
		return out
	}
	if got := strings.Join(names(), ","); got != "Alpha,Zeta" {
		t.Fatalf("manifests for %s, want Alpha,Zeta", got)
	}
	d.SetPolicy(Policy{ExposedTools: []string{"Echo", "NodeInfo", "Zeta", "internal_request_file"}})
	if got := strings.Join(names(), ","); got != "Echo,NodeInfo,Zeta" {
		t.Fatalf("manifests for %s, want Echo,NodeInfo,Zeta", got)
	}
	d.SetPolicy(Policy{ExposedTools: []string{"Nothing"}})
	ms, err := d.Manifests()
	if err != nil || ms == nil || len(ms) != 0 {
		t.Fatalf("Manifests = %v, %v; want an empty, non-nil list", ms, err)
	}

	d.SetPolicy(pol)
	infos := d.Tools()
	var got []string
	for _, info := range infos {
		got = append(got, info.Spec.Name)
	}
	if strings.Join(got, ",") != "Alpha,Echo,Hidden,NodeInfo,Private,Zeta,internal_request_file" {
		t.Fatalf("Tools order: %v", got)
	}
	alpha := infos[0]
	if !alpha.Exposure.Exposed || alpha.Timeout != 45*time.Second || alpha.MaxConcurrent != 2 {
		t.Fatalf("Alpha info: %+v", alpha)
	}
	if hidden := infos[2]; hidden.Exposure.Exposed || hidden.Exposure.Reason != "hidden by hidden_tools" {
		t.Fatalf("Hidden info: %+v", hidden)
	}
}
