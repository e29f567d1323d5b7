// Package direct hosts VCP "direct" plugins (pluginType service and
// hybridservice): JavaScript modules that VCPToolBox require()s into its own
// process. A Go binary cannot load them, so each runs in a Node.js process
// of its own, started from a small host script embedded here (host.js), in
// the plugin's folder with the environment a stdio plugin of that folder
// gets. vcpnode and the host speak newline-delimited JSON over fd 3, never
// stdout, which the plugin prints to freely (the contract VCPToolBox's
// Plugin.js gives service and hybridservice plugins).
//
// It imports toolhost and toolhost/plugin (descriptors, environment and
// result rules), never the node.
package direct

import (
	_ "embed"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

//go:embed host.js
var hostScript string

// Defaults for zero Options fields.
const (
	DefaultGrace       = 5 * time.Second
	DefaultLoadTimeout = 30 * time.Second
	// backoffStart and backoffMax bound the wait before a crashed host is
	// started again; a host that stayed up backoffReset starts over at backoffStart.
	backoffStart = 250 * time.Millisecond
	backoffMax   = 30 * time.Second
	backoffReset = 30 * time.Second
)

// Options configure a Host. Zero fields take the defaults.
type Options struct {
	// Grace is how long a call may go on after its deadline or cancel (its
	// AbortSignal fired) before its host is killed and restarted; also how
	// long shutdown() may take at stop.
	Grace time.Duration
	// LoadTimeout bounds loading the module and its initialize().
	LoadTimeout time.Duration
	// ProcessTrees tracks each host and what it starts (shared with the
	// stdio plugins when given); nil: the Host makes its own.
	ProcessTrees *proctree.Manager
	// Sandbox confines each Node.js host under its plugin's profile
	// (ProfileFor the plugin's name), the plugin's folder its own; nil:
	// unconfined. Its configuration may change between Loads: a plugin
	// whose profile name changed is loaded again, a changed profile applies
	// from the next host started.
	Sandbox *sandbox.Sandbox
	// Log receives host events and, at debug, the plugins' output.
	Log zerolog.Logger
}

func (o Options) withDefaults() Options {
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.LoadTimeout <= 0 {
		o.LoadTimeout = DefaultLoadTimeout
	}
	return o
}

// Settings are what one Load runs the plugins with; they may change from
// one Load to the next (a reload), and a plugin whose settings changed is
// loaded again.
type Settings struct {
	// Node is the node executable: a path, or "" for "node" on PATH.
	Node string
	// MaxMemoryMB caps a plugin's V8 heap (--max-old-space-size), by
	// plugin name; absent or 0 is Node's default.
	MaxMemoryMB map[string]int
}

// Errors callers may branch on.
var (
	// ErrClosed: the Host was closed.
	ErrClosed = errors.New("direct plugin host is closed")
	// ErrNoNode: no Node.js executable was found.
	ErrNoNode = errors.New("needs Node.js")
	// ErrRestarted: the plugin's Node.js host went away (killed, crashed)
	// while the call ran; a new one is being started.
	ErrRestarted = errors.New("the host is being restarted")
	// ErrNotRunning: the plugin's Node.js host is down (crashed, restarting).
	ErrNotRunning = errors.New("Node.js host is not running")
)

// resolveNode finds the node executable.
func resolveNode(configured string) (string, error) {
	name := configured
	if name == "" {
		name = "node"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if configured == "" {
			return "", fmt.Errorf("%w: no node on PATH (install Node.js, or set [plugins] node to its path)", ErrNoNode)
		}
		return "", fmt.Errorf("%w: [plugins] node %q: %v", ErrNoNode, configured, err)
	}
	return path, nil
}

// nodeArgs is the host's command line after the executable.
func nodeArgs(memMB int, name string) []string {
	var args []string
	if memMB > 0 {
		args = append(args, fmt.Sprintf("--max-old-space-size=%d", memMB))
	}
	// The host script comes on stdin (see spawn); the arguments after it
	// name the plugin, for ps.
	return append(args, "-", "vcpnode-direct", name)
}
