package node

import (
	"os"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// sandboxOptions are cfg's sandbox settings for this node: its protected
// files (the config file, the credentials) join the config's own.
func (n *Node) sandboxOptions(cfg config.Config) (sandbox.Options, error) {
	opts, err := cfg.SandboxOptions("", n.getenv, os.Geteuid())
	if err != nil {
		return opts, err
	}
	opts.Protected = append(opts.Protected, n.protected...)
	opts.Trees = n.trees.get()
	opts.Log = n.log
	return opts, nil
}

// newSandbox makes the node's sandbox, before any host that starts
// processes: every one of them confines what it starts with it.
func (n *Node) newSandbox(cfg config.Config) error {
	opts, err := n.sandboxOptions(cfg)
	if err != nil {
		return err
	}
	sb, err := sandbox.New(opts)
	if err != nil {
		return err
	}
	n.sandbox = sb
	n.plugins.sandbox = sb
	return nil
}

// checkSandbox returns cfg's sandbox settings if the sandbox would take
// them; applying them (Update) is the reload's last step.
func (n *Node) checkSandbox(cfg config.Config) (sandbox.Options, error) {
	opts, err := n.sandboxOptions(cfg)
	if err != nil {
		return opts, err
	}
	return opts, n.sandbox.Check(&opts)
}

// ToolProcess reports whether pid is a process a tool started (in one of
// the node's process trees): the control socket refuses such a peer.
func (n *Node) ToolProcess(pid int) bool {
	m := n.trees.get()
	return m != nil && m.Owns(pid)
}
