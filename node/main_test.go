package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary re-executes itself as an MCP stdio server when
// $NODETEST_MCP_DIR is set: it writes its pid there on start (so a test
// sees whether and which server ran) and offers one tool, "hello".
const envMCPMarkerDir = "NODETEST_MCP_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envMCPMarkerDir); dir != "" {
		runStdioMCPServer(dir)
		os.Exit(0)
	}
	os.Exit(runHermetic(m))
}

// runHermetic runs the tests with a state directory of their own: a node
// made without WithGetenv reads $STATE_DIRECTORY, and as root would read
// /var/lib/vcpnode without it.
func runHermetic(m *testing.M) int {
	dir, err := os.MkdirTemp("", "nodetest-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("STATE_DIRECTORY", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func runStdioMCPServer(dir string) {
	tmp := filepath.Join(dir, "pid.tmp")
	if err := os.WriteFile(tmp, fmt.Append(nil, os.Getpid()), 0o600); err == nil {
		_ = os.Rename(tmp, filepath.Join(dir, "pid"))
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "stdiotest", Version: "1.0.0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "hello", Description: "Says hello.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello from " + fmt.Sprint(os.Getpid())}}}, nil
		})
	_ = srv.Run(context.Background(), &sdk.StdioTransport{})
}

// stdioMCPServer configures the test binary as an MCP stdio server that
// leaves its pid in dir; make dir the server's cwd, its own folder, which
// its sandbox profile lets it write.
func stdioMCPServer(t *testing.T, dir string) (cmd string, env map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, map[string]string{envMCPMarkerDir: dir}
}
