package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/wsproto"
)

// Each plugin answers with the descriptors it holds: the ones /proc lists
// that are still open once the listing is done (the listing's own is not).
const (
	// fdsListSh lists in $fds what the shell running it holds. It is the
	// command itself, not a script file, which would hold a descriptor of
	// its own (dash keeps it at 10 or above).
	fdsListSh    = `fds=""; for f in /proc/$$/fd/*; do [ -e "$f" ] && fds="$fds ${f##*/}"; done; `
	fdsCommandSh = fdsListSh + `printf '{"status":"success","result":"fds:%s"}' "$fds"`
	fdsScriptPy  = `import json, os
names = sorted(os.listdir("/proc/self/fd"), key=int)
held = []
for n in names:
    try:
        os.readlink("/proc/self/fd/" + n)
        held.append(n)
    except OSError:
        pass
print(json.dumps({"status": "success", "result": "fds: " + " ".join(held)}))
`
)

// fdsMCPServerPy is an MCP stdio server (newline-delimited JSON-RPC) whose
// one tool, list_fds, answers like fdsScriptPy.
const fdsMCPServerPy = `import json, os, sys
def held():
    out = []
    for n in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            os.readlink("/proc/self/fd/" + n)
            out.append(n)
        except OSError:
            pass
    return out
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method, reply = msg["method"], {"jsonrpc": "2.0", "id": msg["id"]}
    if method == "initialize":
        reply["result"] = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                           "serverInfo": {"name": "fds", "version": "1.0.0"}}
    elif method == "tools/list":
        reply["result"] = {"tools": [{"name": "list_fds", "description": "lists its open files",
                                      "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        reply["result"] = {"content": [{"type": "text", "text": "fds: " + " ".join(held())}]}
    elif method == "ping":
        reply["result"] = {}
    else:
        reply["error"] = {"code": -32601, "message": "method not found"}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
`

// TestPluginsGetOnlyTheStandardFiles runs this test binary as `vcpnode run`
// with two descriptors it inherits without close-on-exec (fd 3, a pipe's
// write end, and fd 10 on /dev/null, as a harness leaves them), and asks a
// cold plugin, a warm Python interpreter and an MCP stdio server which
// descriptors they hold: 0, 1 and 2 only.
func TestPluginsGetOnlyTheStandardFiles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*testwait.Limit)
	defer cancel()
	const key = "fd-K3y_hygiene"
	hub, err := demohub.Start(demohub.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()

	dir := t.TempDir()
	tools := map[string]map[string]any{"FdListSh": {}}
	writeFdPlugin(t, dir, "FdListSh", fdsCommandSh, "", "")
	// The system's python3, not a version manager's shim in a home
	// directory the sandbox keeps closed.
	const systemPath = "/usr/local/bin:/usr/bin:/bin"
	pyErr := findIn("python3", systemPath)
	mcpServer := ""
	if pyErr == nil {
		tools["FdListPy"] = map[string]any{}
		writeFdPlugin(t, dir, "FdListPy", "python3 fds.py", "fds.py", fdsScriptPy)
		mcpDir := filepath.Join(dir, "mcp")
		if err := os.Mkdir(mcpDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mcpDir, "fds_mcp.py"), []byte(fdsMCPServerPy), 0o644); err != nil {
			t.Fatal(err)
		}
		tools["McpFds"] = map[string]any{"command": "list_fds"}
		mcpServer = fmt.Sprintf("[mcp.servers.fds]\ncommand = \"python3\"\nargs = [\"fds_mcp.py\"]\ncwd = %q\n", mcpDir)
	} else {
		t.Logf("no warm interpreter and no MCP server is checked: %v", pyErr)
	}
	socket := filepath.Join(dir, "ctl.sock")
	keyFile := writeFile(t, "key", key+"\n", 0o600)
	cfg := writeFile(t, "c.toml", fmt.Sprintf("[hub]\nurl = %q\nkey_file = %q\n[plugins]\ndirs = [%q]\nstate_dir = %q\nwarm = \"python\"\n[control]\nsocket = %q\n%s",
		hub.BaseURL(), keyFile, filepath.Join(dir, "Plugin"), filepath.Join(dir, "state"), socket, mcpServer), 0o600)

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	var daemonErr testlog.Buffer
	cmd := exec.CommandContext(ctx, os.Args[0], "run", "--config", cfg, "--log-format", "json")
	cmd.Env = hermeticEnv(t, asVCPNodeEnv+"=1", "PATH="+systemPath)
	cmd.Stderr = &daemonErr
	// fd 3 and fd 10 (nil entries are closed in the child).
	cmd.ExtraFiles = []*os.File{pw, nil, nil, nil, nil, nil, nil, devNull}
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("vcpnode run: %v\n%s", err, daemonErr.String())
		}
	}()

	// The MCP server's tool joins once the server runs, and the node
	// reconnects to register it: the connection to use registered all.
	var conn *demohub.Conn
	for conn == nil {
		c, err := hub.Accept(ctx)
		if err != nil {
			t.Fatalf("%v; daemon stderr:\n%s", err, daemonErr.String())
		}
		if reg, err := c.WaitType(ctx, wsproto.TypeRegisterTools); err == nil && registersAll(reg.(wsproto.RegisterTools), tools) {
			conn = c
		}
	}
	ctl := controlapi.NewControlClient(socket)
	defer ctl.Close()
	if pyErr == nil {
		// The Python call must find its interpreter waiting.
		if !testwait.Poll(ctx, func() bool {
			st, err := ctl.Status(ctx)
			return err == nil && st.Plugins.WarmWaiting > 0
		}) {
			st, err := ctl.Status(ctx)
			t.Fatalf("no warm interpreter waits: %+v %v\n%s", st.Plugins, err, daemonErr.String())
		}
	}
	for _, name := range slices.Sorted(maps.Keys(tools)) {
		res, err := conn.Call(ctx, name, tools[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var result struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal(res.Result, &result); err != nil || res.Status != "success" || len(result.Content) == 0 {
			t.Fatalf("%s answered %s %s %s", name, res.Status, res.Result, res.Error)
		}
		text := result.Content[0].Text
		if got := strings.Fields(strings.TrimPrefix(text, "fds:")); !slices.Equal(got, []string{"0", "1", "2"}) {
			t.Errorf("%s holds the descriptors %v, want only 0 1 2", name, got)
		}
	}
	if pyErr == nil {
		st, err := ctl.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Plugins.WarmCalls == 0 {
			t.Error("no call ran in a warm interpreter")
		}
	}
}

func writeFdPlugin(t *testing.T, dir, name, command, script, body string) {
	t.Helper()
	folder := filepath.Join(dir, "Plugin", name)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	quoted, err := json.Marshal(command)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"plugin-manifest.json": fmt.Sprintf(`{"name": %q, "pluginType": "synchronous", "description": "lists its open files",
"entryPoint": {"type": "command", "command": %s}, "communication": {"protocol": "stdio", "timeout": 20000}}`, name, quoted)}
	if script != "" {
		files[script] = body
	}
	for file, text := range files {
		if err := os.WriteFile(filepath.Join(folder, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// findIn is nil when path (a PATH value) has an executable named name.
func findIn(name, path string) error {
	for _, dir := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode()&0o111 != 0 {
			return nil
		}
	}
	return fmt.Errorf("no %s in %s", name, path)
}

// TestSandboxRunGivesOnlyTheStandardFiles: `vcpnode sandbox run` starts its
// command as the daemon starts a tool's, with stdin, stdout and stderr only.
func TestSandboxRunGivesOnlyTheStandardFiles(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Limit)
	defer cancel()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	cmd := exec.CommandContext(ctx, os.Args[0], "sandbox", "run", "--profile", "none", "--", "/bin/sh", "-c", fdsListSh+`echo "fds:$fds"`)
	cmd.Dir, cmd.Env = t.TempDir(), hermeticEnv(t, asVCPNodeEnv+"=1")
	cmd.ExtraFiles = []*os.File{devNull}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := strings.Fields(strings.TrimPrefix(strings.TrimSpace(string(out)), "fds:")); !slices.Equal(got, []string{"0", "1", "2"}) {
		t.Errorf("the command holds the descriptors %v, want only 0 1 2", got)
	}
}

// registersAll says whether reg names every tool of tools.
func registersAll(reg wsproto.RegisterTools, tools map[string]map[string]any) bool {
	names := map[string]bool{}
	for _, raw := range reg.Tools {
		var m struct{ Name string }
		if json.Unmarshal(raw, &m) == nil {
			names[m.Name] = true
		}
	}
	for name := range tools {
		if !names[name] {
			return false
		}
	}
	return true
}
