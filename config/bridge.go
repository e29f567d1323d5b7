package config

import (
	"path"
	"time"
)

// BridgeConfig is the [bridge] table: the server's own tools, reached
// through its VCPToolBridge plugin, on this machine.
type BridgeConfig struct {
	// Offer names the server's tools offered to MCP clients of `vcpnode
	// mcp` (as vcp_<Name>); `*` matches any run of characters. Empty
	// offers none: the server's tools reach further than this machine's.
	Offer []string `toml:"offer"`
	// Timeout is the server tools' declared per-call timeout ([tools.vcp_X]
	// timeout overrides it for one); an asynchronous tool's final result
	// must come within it.
	Timeout Duration `toml:"timeout"`
}

func defaultBridgeConfig() BridgeConfig {
	return BridgeConfig{Offer: []string{}, Timeout: Duration(5 * time.Minute)}
}

// Offers tells whether [bridge] offer names the server's tool name.
func (b BridgeConfig) Offers(name string) bool {
	for _, pat := range b.Offer {
		if ok, err := path.Match(pat, name); err == nil && ok {
			return true
		}
	}
	return false
}

func (c Config) checkBridge(ps *problemList) {
	for _, pat := range c.Bridge.Offer {
		if pat == "" {
			ps.add("bridge.offer", "holds an empty name")
			continue
		}
		if _, err := path.Match(pat, ""); err != nil {
			ps.add("bridge.offer", "%q is not a valid pattern: %v", pat, err)
		}
	}
	if t := c.Bridge.Timeout.D(); t < time.Second || t > 24*time.Hour {
		ps.add("bridge.timeout", "must be between 1s and 24h (got %s)", t)
	}
}
