//go:build !race

package mcp

// bigResultBytes is what the test server's "big" tool returns.
const bigResultBytes = 50 << 20
