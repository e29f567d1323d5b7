package config

import (
	"os"
	"strings"
	"unicode"
)

// Per-node tool names: the server keeps the first tool of a name and drops
// the others, so several nodes serving one plugin folder give each its own
// names.

// WireName is the name the server sees for the tool named tool: [tools.tool]
// name, else [node] tool_names with {tool} and {node} filled in.
func (c Config) WireName(tool string) string {
	if n := c.Tools[tool].Name; n != "" {
		return n
	}
	t := c.Node.ToolNames
	if t == "" || t == "{tool}" {
		return tool
	}
	return strings.NewReplacer("{tool}", tool, "{node}", c.NodeName()).Replace(t)
}

// NodeName is hub.name, else the host name: the serverName the server sees.
func (c Config) NodeName() string {
	if c.Hub.Name != "" {
		return c.Hub.Name
	}
	host, _ := os.Hostname()
	return host
}

func (c Config) checkToolNames(ps *problemList) {
	t := c.Node.ToolNames
	if t != "" && !strings.Contains(t, "{tool}") {
		ps.add("node.tool_names", "%q must hold {tool}: every tool needs a name of its own", t)
	}
	if strings.ContainsAny(strings.NewReplacer("{tool}", "", "{node}", "").Replace(t), "{}") {
		ps.add("node.tool_names", "%q: only {tool} and {node} are filled in", t)
	}
	if strings.TrimSpace(t) != t || strings.ContainsFunc(t, unicode.IsControl) {
		ps.add("node.tool_names", "%q has leading or trailing spaces or a control character", t)
	}
	seen := map[string]string{}
	for tool, tc := range c.Tools {
		if tc.Name == "" {
			continue
		}
		if msg := toolNameProblem(tc.Name); msg != "" {
			ps.add(keyPath("tools", tool)+".name", "%s", msg)
		}
		if other, dup := seen[tc.Name]; dup {
			a, b := min(other, tool), max(other, tool)
			ps.add(keyPath("tools", b)+".name", "%q is also [tools.%s] name: two tools of this node would have one name", tc.Name, a)
		}
		seen[tc.Name] = tool
	}
}
