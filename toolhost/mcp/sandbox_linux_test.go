package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testnet"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// sandboxFixture is a host whose stdio servers are confined, with home as
// the user's home directory. It skips, saying why, where Landlock (network
// rules: ABI 4) is missing.
func sandboxFixture(t *testing.T, home string) (*fixture, *sandbox.Sandbox) {
	t.Helper()
	trees := proctreetest.Manager(t, proctree.ModeAuto)
	sb, err := sandbox.New(sandbox.Options{Home: home, TempDir: t.TempDir(), Trees: trees,
		Log: zerolog.New(zerolog.NewTestWriter(t))})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.NeedNetwork(t, sb.Capabilities())
	return newFixture(t, func(o *Options) {
		o.ProcessTrees, o.Sandbox = trees, sb
		o.Backoff = func(int) time.Duration { return time.Hour } // a server that ended stays so: its reason is kept
	}), sb
}

// probe is a probe server under profile, its marker folder its own (Cwd).
func (f *fixture) probe(name, profile string) ServerConfig {
	c := f.stdio(name, "probe")
	c.Cwd, c.Sandbox = c.Env[envMarkerDir], profile
	return c
}

// TestSandboxConfinesMCPServer: under offline a stdio server cannot
// connect to a loopback listener of the test, under default it can; under
// default it cannot read a file in the home directory but reads its own
// folder. Refusals are errors naming the server's profile. Every server
// process is gone once the host is closed.
func TestSandboxConfinesMCPServer(t *testing.T) {
	ln := testnet.ClosingListener(t)
	home := t.TempDir()
	secret := filepath.Join(home, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("SECRET-KEY-MATERIAL"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := sandboxFixture(t, home)
	f.start(f.probe("cut", "offline"), f.probe("open", "default"))
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	addr := ln.Addr().String()

	_, err := call(ctx, t, f.tool("McpCut"), map[string]any{"command": "dial", "addr": addr})
	if err == nil {
		t.Error("the server under offline connected to the loopback listener")
	} else {
		for _, want := range []string{`MCP server "cut" was refused by the node's sandbox (profile "offline"): TCP connect to port`, "socket: operation not permitted",
			"[sandbox.profiles.cut]\nextends = \"offline\"\nnetwork = true\n\n[mcp.servers.cut]\nsandbox = \"cut\"\n"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q: %v", want, err)
			}
		}
		t.Logf("offline: %v", err)
	}
	res, err := call(ctx, t, f.tool("McpOpen"), map[string]any{"command": "dial", "addr": addr})
	if err != nil || resultText(t, res) != "connected" {
		t.Errorf("under default the server could not connect: %v %v", res, err)
	}

	_, err = call(ctx, t, f.tool("McpOpen"), map[string]any{"command": "read", "path": secret})
	if err == nil || !strings.Contains(err.Error(), `MCP server "open" was refused by the node's sandbox (profile "default"): read `+secret) ||
		!strings.Contains(err.Error(), "[sandbox.profiles.open]\nextends = \"default\"\nread = [") {
		t.Errorf("reading the home directory under default: %v", err)
	}
	own := filepath.Join(f.dir, "open", "pid")
	res, err = call(ctx, t, f.tool("McpOpen"), map[string]any{"command": "read", "path": own})
	if err != nil || resultText(t, res) != f.marker("open", "pid") {
		t.Errorf("reading its own folder: %v %v", res, err)
	}

	pids := []int{f.pid("cut"), f.pid("open")}
	closeCtx, cancelClose := context.WithTimeout(context.Background(), waitLimit)
	defer cancelClose()
	if err := f.host.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		testwait.For(t, "the server process to be gone", func() bool { return proctreetest.Gone(pid) })
	}
}

// TestSandboxNoneConfinesNoMCPServer: the same reads and connects under
// none all succeed (what makes the refusals above able to fail).
func TestSandboxNoneConfinesNoMCPServer(t *testing.T) {
	ln := testnet.ClosingListener(t)
	home := t.TempDir()
	secret := filepath.Join(home, "notes.txt")
	if err := os.WriteFile(secret, []byte("NOTES"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := sandboxFixture(t, home)
	f.start(f.probe("free", "none"))
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if res, err := call(ctx, t, f.tool("McpFree"), map[string]any{"command": "dial", "addr": ln.Addr().String()}); err != nil || resultText(t, res) != "connected" {
		t.Errorf("dial under none: %v %v", res, err)
	}
	if res, err := call(ctx, t, f.tool("McpFree"), map[string]any{"command": "read", "path": secret}); err != nil || resultText(t, res) != "NOTES" {
		t.Errorf("read under none: %v %v", res, err)
	}
}

// TestSandboxMCPServerAtItsMemoryLimit: a stdio server that allocates
// past its profile's memory limit is killed by the kernel, and the call
// (or, on a machine too loaded for the call to wait for the server's end,
// the server's status) names the limit; nothing of the server is left.
func TestSandboxMCPServerAtItsMemoryLimit(t *testing.T) {
	f, sb := sandboxFixture(t, t.TempDir())
	sandboxtest.NeedTreeMemoryLimit(t, sb.Capabilities())
	profiles, err := sandbox.Resolve(map[string]sandbox.Spec{"small": {Extends: "default", Memory: "128MiB"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Update(sandbox.Options{Profiles: profiles, Home: t.TempDir(), TempDir: t.TempDir(), Trees: f.host.o.ProcessTrees,
		Log: zerolog.New(zerolog.NewTestWriter(t))}); err != nil {
		t.Fatal(err)
	}
	f.start(f.probe("hog", "small"))
	first := f.pid("hog")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err = call(ctx, t, f.tool("McpHog"), map[string]any{"command": "alloc", "mib": "1024"})
	if err == nil {
		t.Fatal("allocating 1 GiB under a 128 MiB limit succeeded")
	}
	t.Logf("the error: %v", err)
	limit := `MCP server "hog" reached a limit of its sandbox profile (profile "small"): memory limit 128MiB reached`
	if !strings.Contains(err.Error(), limit) {
		// The call waits for the server's end only so long (a loaded
		// machine): then the reason is the server's, in its status.
		t.Logf("the call's error lacks the limit; the server's status must have it")
		testwait.For(t, "the status to name the limit", func() bool { return strings.Contains(f.status("hog").LastError, limit) })
	}
	testwait.For(t, "the killed server to be gone", func() bool { return proctreetest.Gone(first) })
}

// TestSandboxProfileChangeRestartsMCPServer: applying a server whose
// profile changed restarts it under the new one.
func TestSandboxProfileChangeRestartsMCPServer(t *testing.T) {
	home := t.TempDir()
	secret := filepath.Join(home, "notes.txt")
	if err := os.WriteFile(secret, []byte("NOTES"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := sandboxFixture(t, home)
	f.start(f.probe("notes", "none"))
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if res, err := call(ctx, t, f.tool("McpNotes"), map[string]any{"command": "read", "path": secret}); err != nil || resultText(t, res) != "NOTES" {
		t.Fatalf("under none: %v %v", res, err)
	}
	first := f.pid("notes")
	if err := os.Remove(filepath.Join(f.dir, "notes", "pid")); err != nil {
		t.Fatal(err)
	}
	f.start(f.probe("notes", "default"))
	if f.pid("notes") == first {
		t.Fatal("the server was not restarted")
	}
	testwait.For(t, "the server to run again", func() bool { return f.status("notes").State == StateRunning })
	if _, err := call(ctx, t, f.tool("McpNotes"), map[string]any{"command": "read", "path": secret}); err == nil || !strings.Contains(err.Error(), `(profile "default")`) {
		t.Errorf("after the change to default: %v", err)
	}
	testwait.For(t, "the first server to be gone", func() bool { return proctreetest.Gone(first) })
}

// TestStdioRelativeCommandRunsInCwd: a command given as a relative path is
// the one in the server's cwd, as exec.Command has it, under a profile too.
func TestStdioRelativeCommandRunsInCwd(t *testing.T) {
	f, _ := sandboxFixture(t, t.TempDir())
	c := f.probe("rel", "default")
	if err := os.Symlink(os.Args[0], filepath.Join(c.Cwd, "server")); err != nil {
		t.Fatal(err)
	}
	c.Command = "./server"
	f.start(c)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if res, err := call(ctx, t, f.tool("McpRel"), map[string]any{"command": "echo", "msg": "hi"}); err != nil || !strings.Contains(resultText(t, res), "hi") {
		t.Errorf("the server in its cwd: %v %v (status %+v)", res, err, f.status("rel"))
	}
}

// TestSandboxRefusedServerStartNamesPathAndFix: a Node.js server that
// requires a file outside every grant fails to start under default; its
// status says which file was refused (its first error line, not the
// runtime's last) and the config that grants it.
func TestSandboxRefusedServerStartNamesPathAndFix(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the server is a Node.js script")
	}
	home, outside := t.TempDir(), t.TempDir()
	lib := filepath.Join(outside, "lib.js")
	dir := filepath.Join(t.TempDir(), "server")
	for path, body := range map[string]string{lib: "module.exports = 1;\n", filepath.Join(dir, "server.js"): "require(" + strconv.Quote(lib) + ");\nsetInterval(() => {}, 1000);\n"} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := sandboxFixture(t, home)
	f.start(ServerConfig{Name: "boot", Command: node, Args: []string{"server.js"}, Cwd: dir, Sandbox: "default"})
	st := f.status("boot")
	for _, want := range []string{"EACCES: permission denied, open", `MCP server "boot" was refused by the node's sandbox (profile "default"): read ` + lib,
		"[sandbox.profiles.boot]\nextends = \"default\"\nread = [\"" + outside + "\"]\n\n[mcp.servers.boot]\nsandbox = \"boot\"\n"} {
		if !strings.Contains(st.LastError, want) {
			t.Errorf("the start error lacks %q:\n%s", want, st.LastError)
		}
	}
	if strings.Contains(st.LastError, "Node.js v") {
		t.Errorf("the start error quotes the runtime's last line: %s", st.LastError)
	}
}
