// Package mcp makes MCP (Model Context Protocol) servers tools of this node:
// each configured server is supervised on its own (started, restarted with
// backoff, its tool list followed) and offered as one VCP tool whose
// commands are the server's MCP tools. It uses the official Go SDK.
package mcp

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// ServerConfig is one [mcp.servers.NAME] table.
type ServerConfig struct {
	Name string
	// Stdio: the command, its arguments, extra environment and working dir.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// Streamable HTTP: the endpoint and headers; a header value "$NAME" is
	// read from the daemon's environment when connecting.
	URL     string
	Headers map[string]string
	// SSE reaches URL with the legacy HTTP+SSE transport (protocol
	// 2024-11-05): URL is the event stream, which names the endpoint to
	// post to. Otherwise URL is a streamable HTTP endpoint.
	SSE bool
	// Tool is the VCP tool name; empty means ToolName's default for Name.
	Tool string
	// Include, when set, names the only MCP tools offered; Exclude removes some.
	Include []string
	Exclude []string
	// Timeout is the VCP tool's per-call timeout; zero means toolhost.DefaultTimeout.
	Timeout time.Duration
	// Sandbox is the profile a stdio server runs under (Options.Sandbox);
	// "" is the sandbox's profile for Name. A reload that changes it
	// restarts the server.
	Sandbox string
}

// ToolName is the VCP tool the server becomes.
func (c ServerConfig) ToolName() string { return ToolName(c.Name, c.Tool) }

// Transport names how the server is reached: "stdio", "http" or "sse".
func (c ServerConfig) Transport() string {
	switch {
	case c.URL != "" && c.SSE:
		return "sse"
	case c.URL != "":
		return "http"
	}
	return "stdio"
}

// Equal says whether two configs run the same server the same way; a
// reload restarts only servers whose config is not Equal.
func (c ServerConfig) Equal(o ServerConfig) bool {
	return c.Name == o.Name && c.Command == o.Command && slices.Equal(c.Args, o.Args) &&
		maps.Equal(c.Env, o.Env) && c.Cwd == o.Cwd && c.URL == o.URL && c.SSE == o.SSE && maps.Equal(c.Headers, o.Headers) &&
		c.ToolName() == o.ToolName() && slices.Equal(c.Include, o.Include) &&
		slices.Equal(c.Exclude, o.Exclude) && c.Timeout == o.Timeout && c.Sandbox == o.Sandbox
}

// Validate reports every problem of the table at once.
func (c ServerConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("mcp.servers.%s: "+format, append([]any{c.Name}, args...)...))
	}
	if c.Name == "" {
		errs = append(errs, errors.New("mcp.servers: a server has an empty name"))
	}
	switch {
	case c.Command == "" && c.URL == "":
		bad("set command (a stdio server) or url (a streamable HTTP server)")
	case c.Command != "" && c.URL != "":
		bad("set command or url, not both")
	}
	if c.URL != "" {
		if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
			bad("url %q must start with http:// or https://", c.URL)
		}
		if len(c.Args) > 0 || len(c.Env) > 0 || c.Cwd != "" {
			bad("args, env and cwd are for stdio servers (command), not url")
		}
	}
	if c.Command != "" && len(c.Headers) > 0 {
		bad("headers are for streamable HTTP servers (url), not command")
	}
	if c.SSE && c.URL == "" {
		bad("the SSE transport needs url, the server's event stream")
	}
	for k, v := range c.Headers {
		if name, ok := envRef(v); ok && name == "" {
			bad("header %s: %q names no environment variable", k, v)
		}
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			bad("env key %q is not a valid variable name", k)
		}
	}
	if !schema.Carriable(c.ToolName()) {
		bad("tool %q: a VCP tool name is letters, digits and _ (set tool = \"…\")", c.ToolName())
	}
	if len(c.Include) > 0 && len(c.Exclude) > 0 {
		bad("set include or exclude, not both")
	}
	if c.Timeout < 0 {
		bad("timeout must not be negative")
	}
	return errors.Join(errs...)
}

// ToolName is the VCP tool the server named server becomes: tool when it
// is set, else "Mcp" + server in CamelCase ("filesystem" → "McpFilesystem",
// "brave-search" → "McpBraveSearch"). The config check and the host both
// name servers with it.
func ToolName(server, tool string) string {
	if tool != "" {
		return tool
	}
	var b strings.Builder
	b.WriteString("Mcp")
	upper := true
	for _, r := range server {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			upper = true
			continue
		}
		if upper && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		upper = false
		b.WriteRune(r)
	}
	return b.String()
}

// Options are shared by every server of a Host.
type Options struct {
	Log zerolog.Logger
	// Environ is the daemon's environment ("K=V"); stdio servers get only
	// the base variables and those named in PassEnv from it, never the key.
	Environ []string
	// PassEnv names more daemon variables stdio servers receive.
	PassEnv []string
	// Getenv resolves "$NAME" header values; nil means "not set".
	Getenv func(string) string
	// Secret names environment variables never handed to a server (the VCP
	// key's variable); a header naming one is refused.
	Secret []string
	// MaxMessageBytes caps one message read from a stdio server; 0 means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int
	// InitTimeout bounds starting a server and listing its tools; 0 means
	// DefaultInitTimeout.
	InitTimeout time.Duration
	// FetchTimeout is InitTimeout for a server started through a package
	// runner (npx, uvx, pipx run) until it has first run: that start may
	// download the package first. 0 means DefaultFetchTimeout.
	FetchTimeout time.Duration
	// Backoff is the wait before restart attempt n (1, 2, …); nil means
	// DefaultBackoff.
	Backoff func(attempt int) time.Duration
	// OnChange is called, from a server's goroutine, when the VCP tool a
	// server makes changed (listed for the first time, its tool list
	// changed); the node then rebuilds its registration.
	OnChange func(server string)
	// Version is the client version announced to servers.
	Version string
	// ProcessTrees tracks every process a stdio server starts (see package
	// proctree), so one that leaves the server's session and process group
	// still dies with the server. Nil: the host makes its own and closes it
	// in Close; where process trees are unsupported, a server's process
	// group is what is stopped (the server alone without groups).
	ProcessTrees *proctree.Manager
	// Sandbox confines each stdio server under its profile (ServerConfig.
	// Sandbox), its Cwd its own folder; nil: unconfined. A changed profile
	// applies from the next process started.
	Sandbox *sandbox.Sandbox
}

// Defaults for zero Options fields.
const (
	DefaultMaxMessageBytes = 64 << 20
	DefaultInitTimeout     = 30 * time.Second
	DefaultFetchTimeout    = 5 * time.Minute
	// stableAfter: a session that stayed up this long resets the backoff.
	stableAfter = 30 * time.Second
)

// DefaultBackoff doubles from 500ms to 30s.
func DefaultBackoff(attempt int) time.Duration {
	d := 500 * time.Millisecond
	for i := 1; i < attempt && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second)
}

func (o Options) withDefaults() Options {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.InitTimeout <= 0 {
		o.InitTimeout = DefaultInitTimeout
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	o.FetchTimeout = max(o.FetchTimeout, o.InitTimeout)
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.OnChange == nil {
		o.OnChange = func(string) {}
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return o
}
