package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// listenRule is what a server of this node (the console, metrics, MCP
// over HTTP) accepts as its listen address: host:port, a loopback IP or
// localhost unless remote addresses are allowed.
type listenRule struct {
	example string // a good address, shown for a malformed one
	// beyond is the refusal of an address beyond loopback, after the
	// quoted address; "" allows any address.
	beyond string
}

// problem says what is wrong with listen, or returns "".
func (r listenRule) problem(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Sprintf("%q is not host:port, like %q", listen, r.example)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("%q has no valid port number", listen)
	}
	if host == "localhost" {
		return ""
	}
	if host == "" {
		host = "0.0.0.0" // what an empty host means to net.Listen
	}
	addr, err := netip.ParseAddr(host)
	switch {
	case err != nil && r.beyond == "":
		return fmt.Sprintf("host %q is not an IP address or localhost", host)
	case r.beyond != "" && (err != nil || !addr.IsLoopback()):
		return fmt.Sprintf("%q %s", listen, r.beyond)
	}
	return ""
}

// ConsoleListenProblem says what is wrong with a [console] listen address.
func ConsoleListenProblem(listen string) string {
	return listenRule{example: "127.0.0.1:7465",
		beyond: "is not a loopback address; the console listens on 127.0.0.1, [::1] or localhost only"}.problem(listen)
}

// MetricsListenProblem says what is wrong with a [metrics] listen address.
func MetricsListenProblem(listen string, allowRemote bool) string {
	r := listenRule{example: "127.0.0.1:9464",
		beyond: "would serve metrics beyond this machine; use 127.0.0.1 or [::1], or set metrics.allow_remote = true"}
	if allowRemote {
		r.beyond = ""
	}
	return r.problem(listen)
}

// LoopbackListenProblem says what is wrong with an [mcp.serve] listen
// address (or `mcp --http --listen`).
func LoopbackListenProblem(listen string) string {
	return listenRule{example: "127.0.0.1:8808",
		beyond: "is not a loopback address; MCP over HTTP is served on 127.0.0.1 or [::1] only"}.problem(listen)
}
