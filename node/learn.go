package node

import "github.com/vcpnode/vcpnode/toolhost/sandbox"

// WithSandboxRefusals has f told what a tool's profile refused each time
// a confined process's failure is explained (`vcpnode sandbox learn`).
func WithSandboxRefusals(f func(kind, tool string, refused []sandbox.Refusal)) Option {
	return func(n *Node) { n.onRefusal = f }
}

// CloseLocal ends what New started — plugin hosts, MCP servers, their
// process trees — for a node that was never Run and is done with (a
// one-off local use such as `vcpnode sandbox learn`).
func (n *Node) CloseLocal() {
	n.closeSources()
	n.trees.Close()
}
