package config

import "slices"

// Node modes, [node] mode: which connections the daemon keeps.
const (
	// ModeDistributed is the node endpoint only: tools registered and called.
	ModeDistributed = "distributed"
	// ModeObserver is the observer channels only: events and the server's
	// approval requests, no tools offered.
	ModeObserver = "observer"
	// ModeBoth is both connections ([observer] enabled = true says the same).
	ModeBoth = "both"
)

// Modes are the values [node] mode takes.
var Modes = []string{ModeDistributed, ModeObserver, ModeBoth}

// Mode is the node's mode in force: [node] mode, or, when it is not set,
// ModeBoth for [observer] enabled = true and ModeDistributed otherwise.
func (c Config) Mode() string {
	switch {
	case c.Node.Mode != "":
		return c.Node.Mode
	case c.Observer.Enabled:
		return ModeBoth
	default:
		return ModeDistributed
	}
}

// Distributed reports whether the daemon keeps the node connection.
func (c Config) Distributed() bool { return c.Mode() != ModeObserver }

// Observing reports whether the daemon keeps the observer channels.
func (c Config) Observing() bool { return c.Mode() != ModeDistributed }

func (c Config) checkMode(ps *problemList) {
	m := c.Node.Mode
	switch {
	case m == "":
	case !slices.Contains(Modes, m):
		ps.add("node.mode", "unknown mode %q: use one of %q", m, Modes)
	case c.Observer.Enabled && m != ModeBoth:
		// enabled = true is the older spelling of mode = "both".
		ps.add("observer.enabled", "= true means node.mode = %q, which conflicts with node.mode = %q: remove observer.enabled", ModeBoth, m)
	}
}
