package node

import (
	"os"
	"strings"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// sandboxOptions are cfg's sandbox settings for this node: its protected
// files (the config file, the credentials) join the config's own.
func (n *Node) sandboxOptions(cfg config.Config) (sandbox.Options, error) {
	opts, err := toolconfig.SandboxOptions(cfg, "", n.getenv, os.Geteuid())
	if err != nil {
		return opts, err
	}
	opts.Protected = append(opts.Protected, n.protected...)
	opts.Trees = n.trees.Get()
	opts.Log = n.log
	opts.OnRefusal = n.onRefusal
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
	m := n.trees.Get()
	return m != nil && m.Owns(pid)
}

// sandboxStatus is the sandbox section of the status.
func (n *Node) sandboxStatus() *controlapi.SandboxStatus {
	if n.sandbox == nil {
		return nil
	}
	st := n.sandbox.Status()
	derived := map[string][]controlapi.SandboxGrant{}
	for key, gs := range n.sandbox.AllDerivedGrants() {
		derived[key] = apiGrants(gs)
	}
	return &controlapi.SandboxStatus{
		Mechanism: st.Mechanism, LandlockABI: st.LandlockABI, Memory: st.Memory, Pids: st.Pids, CPU: st.CPU,
		Default: st.Default, Profiles: st.Profiles, NotEnforced: st.NotEnforced, Require: st.Require, Why: st.Why,
		Derived: derived,
	}
}

// toolGrants are what the last process of a tool got beyond its profile
// from what it ran.
func (n *Node) toolGrants(spec toolhost.Spec) []controlapi.SandboxGrant {
	if spec.Builtin || spec.Implicit || n.sandbox == nil {
		return nil
	}
	key := spec.Name
	if server, ok := strings.CutPrefix(spec.Source, "mcp:"); ok {
		key = config.MCPSandboxKey(server)
	}
	return apiGrants(n.sandbox.DerivedGrants(key))
}

func apiGrants(gs []sandbox.Grant) []controlapi.SandboxGrant {
	var out []controlapi.SandboxGrant
	for _, g := range gs {
		out = append(out, controlapi.SandboxGrant{Path: g.Path, Write: g.Write, From: g.From})
	}
	return out
}

// toolProfile is the profile the processes of a tool run under; "" for a
// built-in tool, which starts none.
func (n *Node) toolProfile(spec toolhost.Spec) string {
	if spec.Builtin || spec.Implicit || n.sandbox == nil {
		return ""
	}
	if strings.HasPrefix(spec.Source, "mcp:") {
		return n.sandbox.ProfileFor(config.MCPSandboxKey(strings.TrimPrefix(spec.Source, "mcp:")))
	}
	return n.sandbox.ProfileFor(spec.Name)
}
