//go:build race

package mcp

// Under the race detector the test server needs minutes to marshal 50 MiB;
// the oversized-result tests then send 8 MiB, still far above their cap.
const bigResultBytes = 8 << 20
