package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/internal/humantext"
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
	modes := ApprovalModes
	for _, name := range names {
		t := c.Tools[name]
		key := keyPath("tools", name)
		if t.Approval != "" && !slices.Contains(modes, t.Approval) {
			ps.add(key+".approval", "%q is not one of %s", t.Approval, strings.Join(modes, ", "))
		}
		for _, cmd := range slices.Sorted(maps.Keys(t.Commands)) {
			ckey := key + "." + keyPath("commands", cmd)
			switch a := t.Commands[cmd].Approval; {
			case strings.TrimSpace(cmd) == "":
				ps.add(ckey, "names no command")
			case a == "" && t.Commands[cmd].Expose == nil:
				ps.add(ckey+".approval", "is missing: a commands table sets approval = %s, or expose", strings.Join(modes, ", "))
			case a == "":
			case !slices.Contains(modes, a):
				ps.add(ckey+".approval", "%q is not one of %s", a, strings.Join(modes, ", "))
			}
		}
		if t.ApprovalTimeout < 0 || (t.ApprovalTimeout != 0 && t.ApprovalTimeout.D() < minToolTimeout) {
			ps.add(key+".approval_timeout", "must be at least 1s, like \"2m\" (got %s)", t.ApprovalTimeout)
			continue
		}
		// A tool's own timeout is not known here: `config check` judges
		// it against the plugin folders; the dispatcher cuts the wait to
		// the call's deadline meanwhile.
		if at, msg := t.ApprovalWindowProblem(name, 0); msg != "" {
			ps.add(at, "%s", msg)
		}
	}
}

// ApprovalWindowProblem says why the owner could not answer an "ask"
// tool's call before the call times out: the wait (approval_timeout, else
// its default) is not below the deadline ([tools.NAME] timeout, else own,
// the tool's own timeout, 0 when not known). It returns the key the
// problem belongs to and the problem, or "" when the window fits.
func (t ToolConfig) ApprovalWindowProblem(name string, own time.Duration) (key, problem string) {
	if t.Approval != ApprovalAsk && !t.asksForCommand() {
		return "", ""
	}
	deadline, whose, from := t.Timeout.D(), "timeout", ""
	if deadline == 0 {
		deadline, whose, from = own, "the tool's own timeout", " (from its manifest)"
	}
	if deadline == 0 {
		return "", ""
	}
	prefix := keyPath("tools", name)
	wait, what, key := t.approvalWait(prefix)
	if wait < deadline {
		return "", ""
	}
	return key, fmt.Sprintf("%s %s is not below %s %s%s: the call would time out before it could be approved; lower approval_timeout or raise [%s] timeout",
		what, humantext.Duration(wait), whose, humantext.Duration(deadline), from, prefix)
}

// ApprovalWindowCut says, for an "ask" tool that sets no timeout anywhere
// (neither [tools.NAME] timeout nor the tool itself), that its calls end
// at the default timeout def before the approval wait would: the owner
// gets less than the wait the config shows. A warning, not a problem: the
// call still ends, with a timeout. "" when the window fits.
func (t ToolConfig) ApprovalWindowCut(name string, def time.Duration) (key, warning string) {
	if t.Timeout != 0 || (t.Approval != ApprovalAsk && !t.asksForCommand()) {
		return "", ""
	}
	prefix := keyPath("tools", name)
	wait, what, key := t.approvalWait(prefix)
	if wait < def {
		return "", ""
	}
	return key, fmt.Sprintf("%s %s is cut to less than %s: the tool sets no timeout of its own, so its calls end at the default %s "+
		"while the owner is still asked; set [%s] timeout above %s (the wait, then the run), or approval_timeout below %s",
		what, humantext.Duration(wait), humantext.Duration(def), humantext.Duration(def), prefix, humantext.Duration(wait), humantext.Duration(def))
}

// approvalWait is how long an "ask" call waits for the owner, how to name
// it, and the key a problem with it belongs to.
func (t ToolConfig) approvalWait(prefix string) (wait time.Duration, what, key string) {
	if t.ApprovalTimeout != 0 {
		return t.ApprovalTimeout.D(), "approval_timeout", prefix + ".approval_timeout"
	}
	return DefaultApprovalTimeout, "approval_timeout (default)", prefix + ".approval"
}

// asksForCommand reports whether one of the tool's commands is "ask".
func (t ToolConfig) asksForCommand() bool {
	for _, c := range t.Commands {
		if c.Approval == ApprovalAsk {
			return true
		}
	}
	return false
}
