package config

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// ConsoleConfig is the [console] table: the local web console.
type ConsoleConfig struct {
	// Listen is a loopback host:port, like "127.0.0.1:7465"; empty is off.
	// Anything beyond loopback is refused: the console can run tools.
	Listen string `toml:"listen"`
	// IdleTimeout ends a browser session nobody used for that long.
	IdleTimeout Duration `toml:"idle_timeout"`
}

// DefaultConsoleIdle is [console] idle_timeout's default.
const DefaultConsoleIdle = 30 * time.Minute

func defaultConsoleConfig() ConsoleConfig {
	return ConsoleConfig{IdleTimeout: Duration(DefaultConsoleIdle)}
}

func (c Config) checkConsole(ps *problemList) {
	if l := c.Console.Listen; l != "" {
		if msg := ConsoleListenProblem(l); msg != "" {
			ps.add("console.listen", "%s", msg)
		}
	}
	if d := c.Console.IdleTimeout; d < 0 || (d != 0 && d.D() < time.Minute) {
		ps.add("console.idle_timeout", "must be at least 1m, like \"30m\" (got %s)", d)
	}
}

// ConsoleListenProblem says what is wrong with a [console] listen address:
// it must be host:port on a loopback IP address or localhost.
func ConsoleListenProblem(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Sprintf("%q is not host:port, like \"127.0.0.1:7465\"", listen)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Sprintf("%q has no valid port number", listen)
	}
	if host == "localhost" {
		return ""
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !addr.IsLoopback() {
		return fmt.Sprintf("%q is not a loopback address; the console listens on 127.0.0.1, [::1] or localhost only", listen)
	}
	return ""
}
