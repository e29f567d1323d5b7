package config

import (
	"slices"
	"strings"
)

// MCPConfig is the [mcp] table: MCP servers this node offers as VCP tools
// ([mcp.servers.NAME]) and how `vcpnode mcp` offers this node's tools to
// MCP clients ([mcp.serve]).
type MCPConfig struct {
	Servers map[string]MCPServerConfig `toml:"servers"`
	Serve   MCPServeConfig             `toml:"serve"`
}

// MCPServerConfig is one [mcp.servers.NAME] table: a stdio server (command)
// or an HTTP server (url): streamable HTTP, or the legacy SSE transport
// with transport = "sse".
type MCPServerConfig struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	Cwd     string            `toml:"cwd"`
	URL     string            `toml:"url"`
	// Transport is "stdio" (command), "http" (streamable HTTP, url's
	// default) or "sse" (the 2024-11-05 HTTP+SSE transport, url); empty
	// follows command or url.
	Transport string `toml:"transport"`
	// Headers are sent to a url server; a value "$NAME" is read from the
	// daemon's environment when connecting (never VCPNODE_KEY).
	Headers map[string]string `toml:"headers"`
	// Tool is the VCP tool name; empty means toolhost/mcp's default for NAME
	// (checked in toolconfig).
	Tool    string   `toml:"tool"`
	Include []string `toml:"include"`
	Exclude []string `toml:"exclude"`
	// Timeout is the tool's per-call timeout; zero means the default (60s).
	Timeout Duration `toml:"timeout"`
	// Sandbox is the profile a stdio server runs under; empty is sandbox.profile.
	Sandbox string `toml:"sandbox"`
}

// MCPServeConfig is the [mcp.serve] table, read by `vcpnode mcp`.
type MCPServeConfig struct {
	// Tools offered to MCP clients; empty means the tools exposed to the
	// VCP server.
	Tools []string `toml:"tools"`
	// Listen, when set, also serves streamable HTTP on this loopback
	// address (host:port); TokenFile (0600) holds the bearer token.
	Listen    string `toml:"listen"`
	TokenFile string `toml:"token_file"`
}

// The transports of an [mcp.servers.NAME] table.
const (
	MCPTransportStdio = "stdio"
	MCPTransportHTTP  = "http"
	MCPTransportSSE   = "sse"
)

func defaultMCPConfig() MCPConfig {
	// Empty, not nil: `config show` writes [] and must read back equal.
	return MCPConfig{Serve: MCPServeConfig{Tools: []string{}}}
}

func (c Config) checkMCP(ps *problemList) {
	names := make([]string, 0, len(c.MCP.Servers))
	for name := range c.MCP.Servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := c.MCP.Servers[name]
		key := keyPath("mcp", "servers", name)
		switch {
		case s.Command == "" && s.URL == "":
			ps.add(key, "set command (a stdio server) or url (an HTTP server: streamable, or SSE with transport = \"sse\")")
		case s.Command != "" && s.URL != "":
			ps.add(key, "set command or url, not both")
		}
		if s.URL != "" {
			if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
				ps.add(key+".url", "%q must start with http:// or https://", s.URL)
			}
			if len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" {
				ps.add(key, "args, env and cwd are for stdio servers (command), not url")
			}
		}
		switch s.Transport {
		case "", MCPTransportStdio, MCPTransportHTTP, MCPTransportSSE:
		default:
			ps.add(key+".transport", "%q is not one of %s, %s, %s", s.Transport, MCPTransportStdio, MCPTransportHTTP, MCPTransportSSE)
		}
		switch {
		case s.Transport == MCPTransportStdio && s.URL != "":
			ps.add(key+".transport", "\"stdio\" runs command; a url server is \"http\" (streamable HTTP) or \"sse\"")
		case (s.Transport == MCPTransportHTTP || s.Transport == MCPTransportSSE) && s.URL == "":
			ps.add(key+".transport", "%q needs url, the server's endpoint (for SSE, the URL of its event stream, often ending in /sse)", s.Transport)
		}
		if s.Command != "" && len(s.Headers) > 0 {
			ps.add(key+".headers", "are for streamable HTTP servers (url), not command")
		}
		if s.Cwd != "" {
			if msg := absPathProblem(s.Cwd); msg != "" {
				ps.add(key+".cwd", "%s", msg)
			}
		}
		for k := range s.Env {
			switch {
			case !envName.MatchString(k):
				ps.add(key+".env", "%q is not an environment variable name", k)
			case k == EnvKey:
				ps.add(key+".env", "%s holds the hub key and is never given to MCP servers", EnvKey)
			}
		}
		for k, v := range s.Headers {
			ref, isRef := strings.CutPrefix(v, "$")
			switch {
			case !isRef:
			case !envName.MatchString(ref):
				ps.add(key+".headers", "%s: %q is not \"$\" and an environment variable name", k, v)
			case ref == EnvKey:
				ps.add(key+".headers", "%s: %s holds the hub key and is never sent to MCP servers", k, EnvKey)
			}
		}
		if len(s.Include) > 0 && len(s.Exclude) > 0 {
			ps.add(key, "set include or exclude, not both")
		}
		if s.Timeout != 0 && (s.Timeout.D() < minToolTimeout || s.Timeout.D() > maxToolTimeout) {
			ps.add(key+".timeout", "must be between 1s and %s (got %s)", maxToolTimeout, s.Timeout)
		}
	}
	checkToolList(ps, "mcp.serve.tools", c.MCP.Serve.Tools)
	if l := c.MCP.Serve.Listen; l != "" {
		if msg := LoopbackListenProblem(l); msg != "" {
			ps.add("mcp.serve.listen", "%s", msg)
		}
		if c.MCP.Serve.TokenFile == "" {
			ps.add("mcp.serve.token_file", "is needed with mcp.serve.listen: MCP clients over HTTP must send its bearer token")
		}
	}
	if f := c.MCP.Serve.TokenFile; f != "" {
		if msg := absPathProblem(f); msg != "" {
			ps.add("mcp.serve.token_file", "%s", msg)
		}
	}
}
