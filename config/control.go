package config

import (
	"regexp"
	"slices"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost"
)

// ControlConfig is the [control] table: the daemon's local control socket.
type ControlConfig struct {
	// Socket is the control socket's path; empty picks the default (see
	// DefaultControlSocket). `vcpnode run --socket` overrides it.
	Socket string `toml:"socket"`
	// Group, a group name or number, may use the read-only commands
	// (status, tools, approvals…): the socket becomes 0660 of that group.
	// Changes stay with root and the daemon's user (SO_PEERCRED).
	Group string `toml:"group"`
}

// AuditConfig is the [audit] table: the record of remote calls. Every call
// is logged at info level whatever this says.
type AuditConfig struct {
	// File, when set, also receives one JSON line per call (created 0600).
	File string `toml:"file"`
}

// MetricsConfig is the [metrics] table: the optional Prometheus endpoint.
type MetricsConfig struct {
	// Listen is host:port for /metrics, like "127.0.0.1:9464"; empty is off.
	Listen string `toml:"listen"`
	// AllowRemote permits a non-loopback Listen address.
	AllowRemote bool `toml:"allow_remote"`
}

// MaxSocketPathBytes is the longest Unix socket path Linux accepts
// (sun_path is 108 bytes including the terminating NUL; macOS allows 103).
const MaxSocketPathBytes = 107

func defaultControlConfig() ControlConfig { return ControlConfig{} }

// groupName is what groupadd accepts (and a numeric gid).
var groupName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$`)

func defaultMetricsConfig() MetricsConfig { return MetricsConfig{} }

func (c Config) checkControl(ps *problemList) {
	if s := c.Control.Socket; s != "" {
		if msg := absPathProblem(s); msg != "" {
			ps.add("control.socket", "%s", msg)
		} else if len(s) > MaxSocketPathBytes {
			ps.add("control.socket", "is %d bytes long; Unix socket paths are limited to %d: choose a shorter path", len(s), MaxSocketPathBytes)
		}
	}
	if g := c.Control.Group; g != "" && !groupName.MatchString(g) {
		ps.add("control.group", "%q is not a group name or number", g)
	}
	if f := c.Audit.File; f != "" {
		if msg := absPathProblem(f); msg != "" {
			ps.add("audit.file", "%s", msg)
		}
	}
	if l := c.Metrics.Listen; l != "" {
		if msg := MetricsListenProblem(l, c.Metrics.AllowRemote); msg != "" {
			ps.add("metrics.listen", "%s", msg)
		}
	}
	c.checkApprovals(ps)
}

// checkApprovals checks the approval keys of the [tools.NAME] tables.
func (c Config) checkApprovals(ps *problemList) {
	names := make([]string, 0, len(c.Tools))
	for name := range c.Tools {
		names = append(names, name)
	}
	slices.Sort(names)
	modes := make([]string, len(toolhost.ApprovalModes))
	for i, m := range toolhost.ApprovalModes {
		modes[i] = string(m)
	}
	for _, name := range names {
		t := c.Tools[name]
		key := keyPath("tools", name)
		if t.Approval != "" && !slices.Contains(modes, t.Approval) {
			ps.add(key+".approval", "%q is not one of %s", t.Approval, strings.Join(modes, ", "))
		}
		if t.ApprovalTimeout < 0 || (t.ApprovalTimeout != 0 && t.ApprovalTimeout.D() < minToolTimeout) {
			ps.add(key+".approval_timeout", "must be at least 1s, like \"2m\" (got %s)", t.ApprovalTimeout)
			continue
		}
		// The owner must be able to answer before the call itself times
		// out. A tool's own timeout is not known here; the dispatcher cuts
		// the wait to the call's deadline in that case.
		if t.Approval != string(toolhost.ApprovalAsk) || t.Timeout == 0 {
			continue
		}
		wait, what, at := t.ApprovalTimeout.D(), "approval_timeout", key+".approval_timeout"
		if wait == 0 {
			wait, what, at = toolhost.DefaultApprovalTimeout, "approval_timeout (default)", key+".approval"
		}
		if wait >= t.Timeout.D() {
			ps.add(at, "%s %s must be below timeout %s, or the call times out before it can be approved; lower approval_timeout or raise timeout",
				what, toolhost.ShortDuration(wait), toolhost.ShortDuration(t.Timeout.D()))
		}
	}
}
