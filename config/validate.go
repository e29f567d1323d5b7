package config

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Bounds the config is checked against.
const (
	minResultBytes = 1 * KiB
	minToolTimeout = time.Second
	// maxToolTimeout is the largest communication.timeout the server accepts
	// (a JavaScript setTimeout delay, a signed 32-bit count of milliseconds).
	maxToolTimeout = 2147483647 * time.Millisecond
	maxNameBytes   = 128
)

// Allowed values of [log] level and format.
var (
	LogLevels  = []string{"debug", "info", "warn", "error"}
	LogFormats = []string{"auto", "console", "json"}
)

// problems runs every check, config's and checks, and returns all the
// problems found, keyed by their TOML path, without positions.
func (c Config) problems(checks []Check) []Problem {
	var ps problemList
	c.checkHub(&ps)
	c.checkNode(&ps)
	c.checkFiles(&ps)
	c.checkLog(&ps)
	c.checkTools(&ps)
	c.checkPlugins(&ps)
	c.checkControl(&ps)
	c.checkConsole(&ps)
	c.checkPlaceholders(&ps)
	c.checkMCP(&ps)
	c.checkMode(&ps)
	c.checkObserver(&ps)
	c.checkBridge(&ps)
	c.checkToolNames(&ps) // names.go
	for _, check := range checks {
		ps = append(ps, check(c)...)
	}
	return ps
}

type problemList []Problem

func (ps *problemList) add(key, format string, args ...any) {
	*ps = append(*ps, Problem{Key: key, Message: fmt.Sprintf(format, args...)})
}

func (c Config) checkHub(ps *problemList) {
	h := c.Hub
	if msg := baseURLProblem(h.URL); msg != "" {
		ps.add("hub.url", "%s", msg)
	}
	if h.Key != "" {
		if msg := keyProblem(h.Key); msg != "" {
			ps.add("hub.key", "%s", msg)
		}
		if h.KeyFile != "" {
			ps.add("hub.key_file", "set either hub.key or hub.key_file, not both")
		}
	}
	if h.KeyFile != "" && !filepath.IsAbs(h.KeyFile) {
		ps.add("hub.key_file", "%q is not an absolute path", h.KeyFile)
	}
	switch {
	case len(h.Name) > maxNameBytes:
		ps.add("hub.name", "is %d bytes long; the limit is %d", len(h.Name), maxNameBytes)
	case strings.ContainsFunc(h.Name, unicode.IsControl):
		ps.add("hub.name", "contains a control character")
	}
	if !slices.Contains(HubAuths, h.Auth) {
		ps.add("hub.auth", "%q is not one of %q", h.Auth, HubAuths)
	}
	positive(ps, "hub.ping_interval", h.PingInterval)
	positive(ps, "hub.pong_timeout", h.PongTimeout)
	positive(ps, "hub.handshake_timeout", h.HandshakeTimeout)
	if h.PublicIP != "" {
		addr, err := netip.ParseAddr(h.PublicIP)
		switch {
		case err != nil:
			ps.add("hub.public_ip", "%q is not an IP address", h.PublicIP)
		case addr.IsLoopback() || addr.IsUnspecified() || addr.IsMulticast():
			// The server would route every request from that address to this node.
			ps.add("hub.public_ip", "%s is a loopback, unspecified or multicast address; leave it empty instead", addr)
		}
	}
}

func positive(ps *problemList, key string, d Duration) {
	if d <= 0 {
		ps.add(key, "must be positive, like \"20s\" (got %s)", d)
	}
}

func (c Config) checkNode(ps *problemList) {
	n := c.Node
	checkLabels(ps, n.Labels) // labels.go
	if n.MaxConcurrent < 1 {
		ps.add("node.max_concurrent", "must be at least 1 (got %d)", n.MaxConcurrent)
	}
	if n.Queue < 0 {
		ps.add("node.queue", "must be 0 or more (got %d)", n.Queue)
	}
	if n.MaxResultBytes < minResultBytes || n.MaxResultBytes > ServerFrameLimit {
		ps.add("node.max_result_bytes", "must be between %d (1 KiB) and %d (100 MiB, the server's frame limit) (got %d)",
			minResultBytes, ServerFrameLimit, n.MaxResultBytes)
	}
	if n.Oversize != "truncate" && n.Oversize != "error" {
		ps.add("node.oversize", "must be \"truncate\" or \"error\" (got %q)", n.Oversize)
	}
	if n.RepeatLimit < 0 {
		ps.add("node.repeat_limit", "must be 0 (off) or more (got %d)", n.RepeatLimit)
	}
	positive(ps, "node.repeat_window", n.RepeatWindow)
	// Zero is allowed: in-flight calls are cancelled at once on shutdown.
	if n.ShutdownGrace < 0 {
		ps.add("node.shutdown_grace", "must not be negative (got %s)", n.ShutdownGrace)
	}
	if n.MemoryLimit != 0 && n.MemoryLimit < minMemoryLimit {
		ps.add("node.memory_limit", "must be 0 (no limit) or at least %d (16 MiB) (got %d)", minMemoryLimit, n.MemoryLimit)
	}
	checkToolList(ps, "node.exposed_tools", n.ExposedTools)
	checkToolList(ps, "node.hidden_tools", n.HiddenTools)
	for i, name := range n.HiddenTools {
		if name != "" && slices.Contains(n.ExposedTools, name) {
			ps.add(indexKey("node.hidden_tools", i), "%q is also in node.exposed_tools; remove it from one of the two lists", name)
		}
	}
}

// minMemoryLimit is below any node's working set: a smaller soft limit
// would only make the garbage collector run without pause.
const minMemoryLimit = 16 << 20

func checkToolList(ps *problemList, key string, names []string) {
	for i, name := range names {
		if msg := toolNameProblem(name); msg != "" {
			ps.add(indexKey(key, i), "tool name %s", msg)
		}
	}
}

// absPathProblem says what is wrong with a path that must be absolute.
func absPathProblem(p string) string {
	switch {
	case p == "":
		return "is empty"
	case !filepath.IsAbs(p):
		return fmt.Sprintf("%q is not an absolute path", p)
	}
	return ""
}

func (c Config) checkFiles(ps *problemList) {
	f := c.Files
	for i, root := range f.Roots {
		if msg := absPathProblem(root); msg != "" {
			ps.add(indexKey("files.roots", i), "%s", msg)
		}
	}
	if f.WriteMaxBytes <= 0 || f.WriteMaxBytes > ServerFrameLimit {
		ps.add("files.write_max_bytes", "must be from 1 to %d, the server's frame limit (got %d)", int64(ServerFrameLimit), f.WriteMaxBytes)
	}
	if f.MaxBytes <= 0 {
		ps.add("files.max_bytes", "must be positive (got %d)", f.MaxBytes)
	}
}

// HumanBytes writes n in bytes, KiB or MiB, for messages.
func HumanBytes(n int64) string {
	switch {
	case n >= MiB:
		return fmt.Sprintf("%.2f MiB", float64(n)/MiB)
	case n >= KiB:
		return fmt.Sprintf("%.2f KiB", float64(n)/KiB)
	}
	return fmt.Sprintf("%d bytes", n)
}

func (c Config) checkLog(ps *problemList) {
	if !slices.Contains(LogLevels, c.Log.Level) {
		ps.add("log.level", "%q is not one of %s", c.Log.Level, strings.Join(LogLevels, ", "))
	}
	if !slices.Contains(LogFormats, c.Log.Format) {
		ps.add("log.format", "%q is not one of %s", c.Log.Format, strings.Join(LogFormats, ", "))
	}
}

// Bounds of [tools.NAME] max_memory, in MiB: V8 needs some heap to start at all.
const (
	minMaxMemoryMiB = 16
	maxMaxMemoryMiB = 1 << 20
)

func (c Config) checkTools(ps *problemList) {
	names := make([]string, 0, len(c.Tools))
	for name := range c.Tools {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t := c.Tools[name]
		key := keyPath("tools", name)
		if msg := toolNameProblem(name); msg != "" {
			ps.add(key, "tool name %s", msg)
		}
		// Zero means "use the tool's own timeout".
		if t.Timeout != 0 {
			if msg := ToolTimeoutProblem(t.Timeout.D()); msg != "" {
				ps.add(key+".timeout", "%s", msg)
			}
		}
		if t.MaxConcurrent < 0 {
			ps.add(key+".max_concurrent", "must be 0 (no per-tool limit) or more (got %d)", t.MaxConcurrent)
		}
		if t.RepeatLimit != nil && *t.RepeatLimit < 0 {
			ps.add(key+".repeat_limit", "must be 0 (off for this tool) or more (got %d)", *t.RepeatLimit)
		}
		if t.MaxMemory != 0 && (t.MaxMemory < minMaxMemoryMiB || t.MaxMemory > maxMaxMemoryMiB) {
			ps.add(key+".max_memory", "must be 0 (Node's default) or between %d and %d MiB (got %d)", minMaxMemoryMiB, maxMaxMemoryMiB, t.MaxMemory)
		}
	}
}

// ToolTimeoutProblem describes what is wrong with d as a tool's timeout
// ([tools.NAME] timeout, or the console's override of it), or returns "".
func ToolTimeoutProblem(d time.Duration) string {
	if d < minToolTimeout || d > maxToolTimeout {
		return fmt.Sprintf("must be between 1s and %s (2147483647 ms, the server's limit) (got %s)", maxToolTimeout, d)
	}
	return ""
}

// toolNameProblem describes what is wrong with a tool name, or returns "".
func toolNameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case strings.TrimSpace(name) != name:
		return fmt.Sprintf("%q has leading or trailing spaces", name)
	case strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Sprintf("%q contains a control character", name)
	}
	return ""
}

// Warnings are settings that work but are probably not what the operator
// wants. They never stop the node; `vcpnode config check` prints them.
func (c Config) Warnings() []string {
	var ws []string
	if u, err := normalizeBase(c.Hub.URL); err == nil {
		if u.Path != "" {
			ws = append(ws, fmt.Sprintf("hub.url has the path prefix %q: the server only accepts /vcp-distributed-server/… at its root, so this works only behind a proxy that strips the prefix", u.Path))
		}
		addr, err := netip.ParseAddr(u.Hostname())
		if u.Scheme == "ws" && (err != nil || !addr.IsLoopback()) && u.Hostname() != "localhost" {
			ws = append(ws, "hub.url uses ws:// to a non-loopback host: the key travels in clear text; use wss:// through a TLS proxy")
		}
	}
	for _, root := range c.Files.Roots {
		if root == "/" {
			ws = append(ws, "files.roots includes / : every readable file on this machine can be requested")
		}
	}
	return ws
}
