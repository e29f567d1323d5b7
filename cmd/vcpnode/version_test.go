package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testnet"
)

func TestVersionCommand(t *testing.T) {
	oldVersion, oldCommit := version, commit
	t.Cleanup(func() { version, commit = oldVersion, oldCommit })
	version, commit = "v1.2.3", "0123456789abcdef0123"

	ta := newTestApp(t)
	if code := ta.run("version"); code != exitOK {
		t.Fatalf("exit code %d", code)
	}
	want := "vcpnode v1.2.3 (commit 0123456789ab, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if got := ta.stdout.String(); got != want {
		t.Errorf("version = %q, want %q", got, want)
	}

	ta = newTestApp(t)
	if code := ta.run("version", "--json"); code != exitOK {
		t.Fatalf("exit code %d", code)
	}
	var b buildInfo
	if err := json.Unmarshal([]byte(ta.stdout.String()), &b); err != nil {
		t.Fatalf("version --json: %v\n%s", err, ta.stdout)
	}
	if b.Version != "v1.2.3" || b.Commit != "0123456789abcdef0123" || b.Go != runtime.Version() || b.OS != runtime.GOOS {
		t.Errorf("version --json = %+v", b)
	}
}

func TestVersionFallsBackToBuildInfo(t *testing.T) {
	oldVersion, oldCommit := version, commit
	t.Cleanup(func() { version, commit = oldVersion, oldCommit })
	version, commit = "", ""
	b := currentBuild()
	if b.Version == "" || b.Commit == "" {
		t.Errorf("currentBuild() = %+v, want placeholders at least", b)
	}
}

// TestBuiltBinary builds vcpnode with the stamping flags the release uses
// and runs it as a real process.
func TestBuiltBinary(t *testing.T) {
	bin := builtBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "vcpnode v9.8.7 (commit feedface, ") {
		t.Errorf("version = %q, %v", out, err)
	}

	// Usage errors exit 2 from the real main, errors exit 1.
	for args, want := range map[string]int{"bogus": exitUsage, "config check --config /nonexistent/vcpnode.toml": exitError} {
		err := exec.CommandContext(ctx, bin, strings.Fields(args)...).Run()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != want {
			t.Errorf("vcpnode %s: %v, want exit code %d", args, err, want)
		}
	}

	// The real node: it keeps retrying an unreachable hub and stops with
	// exit code 0 on SIGTERM.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().String()
	ln.Close()
	// Its own config, socket and state directory, and an environment with
	// nothing of the developer's: never a real service's /run/vcpnode or
	// /var/lib/vcpnode, even as root.
	cfg := writeFile(t, "c.toml", "[hub]\nurl = \"ws://"+closedPort+"\"\n[log]\nformat = \"json\"\n[plugins]\nstate_dir = \""+t.TempDir()+"\"\n", 0o600)
	run := exec.CommandContext(ctx, bin, "run", "--config", cfg, "--socket", testnet.SocketPath(t))
	run.Env = hermeticEnv(t, "VCPNODE_KEY=e2e-s3cr3t")
	stderr, err := run.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(stderr)
	waitLine(t, lines, `"message":"starting"`)
	if err := run.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for line := range lines {
		rest = append(rest, line)
	}
	if err := run.Wait(); err != nil {
		t.Errorf("vcpnode run after SIGTERM: %v\n%s", err, strings.Join(rest, "\n"))
	}
	if all := strings.Join(rest, "\n"); strings.Contains(all, "e2e-s3cr3t") {
		t.Errorf("the key appeared in the log:\n%s", all)
	}
}

// The vcpnode binary, built once per test binary with a version stamped in.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildTimeout is generous: a cold build cache on a loaded machine takes
// minutes, and a test failing for it says nothing about vcpnode.
const buildTimeout = 15 * time.Minute

// builtBinary builds ./cmd/vcpnode with -ldflags once; TestMain removes it.
func builtBinary(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go toolchain in PATH to build the binary: %v", err)
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "vcpnode-built-")
		if built.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		bin := filepath.Join(built.dir, "vcpnode")
		out, err := exec.CommandContext(ctx, gobin, "build", "-o", bin, "-ldflags", "-X main.version=v9.8.7 -X main.commit=feedface", ".").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		built.path = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// removeBuilt deletes what builtBinary made.
func removeBuilt() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// hermeticEnv is the environment for a vcpnode a test starts: its own HOME,
// XDG, state and temporary directories (as root the state directory would
// be /var/lib/vcpnode otherwise), and nothing of the developer's (no
// $VCPNODE_CONFIG, key, systemd variables or runtime directory).
func hermeticEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	// GOCOVERDIR: a test binary built with -cover warns on stderr at exit
	// without a place for its counters, and the tests compare stderr.
	for _, sub := range []string{"HOME=home", "XDG_RUNTIME_DIR=run", "XDG_STATE_HOME=state", "XDG_CONFIG_HOME=config", "TMPDIR=tmp", "STATE_DIRECTORY=statedir", "GOCOVERDIR=cover"} {
		name, rel, _ := strings.Cut(sub, "=")
		path := filepath.Join(dir, rel)
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		env = append(env, name+"="+path)
	}
	return append(env, extra...)
}
