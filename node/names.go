package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
)

// The names the server sees ([node] tool_names, [tools.NAME] name): applied
// to register_tools and to every invocation text the server shows the
// model, reversed on execute_tool.

// checkWireNames refuses a config under which two tools would reach the
// server under one name.
func checkWireNames(cfg config.Config, tools []toolhost.Tool) error {
	seen := map[string]string{}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if s := t.Spec(); !s.Implicit && !s.FromServer {
			names = append(names, s.Name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		wire := cfg.WireName(name)
		if other, dup := seen[wire]; dup && other != name {
			return fmt.Errorf("tools %q and %q would both be registered as %q ([node] tool_names, [tools.NAME] name)", other, name, wire)
		}
		seen[wire] = name
	}
	return nil
}

// serverName is the name the server knows the tool by, when [node]
// tool_names or [tools.NAME] name give it one of its own; "" otherwise, and
// for tools never registered.
func serverName(cfg config.Config, s toolhost.Spec) string {
	if s.Implicit || s.FromServer {
		return ""
	}
	if wire := cfg.WireName(s.Name); wire != s.Name {
		return wire
	}
	return ""
}

// wireManifests renames the manifests for the server, their invocation
// texts included; unchanged when no name changes.
func wireManifests(cfg config.Config, raws []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(raws))
	for _, raw := range raws {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil {
			out = append(out, raw)
			continue
		}
		name, _ := m["name"].(string)
		wire := cfg.WireName(name)
		if wire == name {
			out = append(out, raw)
			continue
		}
		m["name"] = wire
		rewriteInvocations(m, name, wire)
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(m) != nil {
			out = append(out, raw)
			continue
		}
		out = append(out, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	return out
}

// rewriteInvocations puts wire in place of name wherever the model is told
// to call the tool: tool_name:「始」name「末」 in each command's texts.
func rewriteInvocations(m map[string]any, name, wire string) {
	r := strings.NewReplacer(
		"tool_name:"+toolhost.ValueStart+name+toolhost.ValueEnd, "tool_name:"+toolhost.ValueStart+wire+toolhost.ValueEnd,
		"tool_name: "+toolhost.ValueStart+name+toolhost.ValueEnd, "tool_name: "+toolhost.ValueStart+wire+toolhost.ValueEnd)
	caps, _ := m["capabilities"].(map[string]any)
	cmds, _ := caps["invocationCommands"].([]any)
	for _, c := range cmds {
		cmd, ok := c.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range []string{"description", "example"} {
			if s, ok := cmd[k].(string); ok {
				cmd[k] = r.Replace(s)
			}
		}
	}
	if d, ok := m["description"].(string); ok {
		m["description"] = r.Replace(d)
	}
}

// renames tells whether cfg gives any tool another name on the server.
func renames(cfg config.Config) bool {
	if t := cfg.Node.ToolNames; t != "" && t != "{tool}" {
		return true
	}
	for _, tc := range cfg.Tools {
		if tc.Name != "" {
			return true
		}
	}
	return false
}

// localName is the tool the server means by wire; false when wire is a
// tool's own name that the server was given under another (a call by it is
// as unknown as any name the server never got).
func (n *Node) localName(cfg config.Config, wire string) (string, bool) {
	if !renames(cfg) {
		return wire, true
	}
	for _, t := range n.Tools() {
		if !t.Spec.Implicit && !t.Spec.FromServer && cfg.WireName(t.Spec.Name) == wire {
			return t.Spec.Name, true
		}
	}
	return wire, cfg.WireName(wire) == wire
}
