package config

import (
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
