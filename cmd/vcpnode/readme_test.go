//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/wsproto"
)

// readmeBlocks returns the ```sh blocks that follow a "<!-- first-run"
// marker in the README, as lists of command lines.
func readmeBlocks(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	marked, in := false, false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "<!-- first-run"):
			marked = true
		case marked && line == "```sh":
			in, marked = true, false
			blocks = append(blocks, nil)
		case in && line == "```":
			in = false
		case in:
			blocks[len(blocks)-1] = append(blocks[len(blocks)-1], line)
		}
	}
	if len(blocks) < 2 {
		t.Fatalf("the README has %d first-run blocks, want 2", len(blocks))
	}
	return blocks
}

// TestReadmeFirstRun runs the README's "Running against a real server"
// steps as written, in a fresh HOME, against the fake hub: init, check,
// run, then status, tools and a call of an example plugin. Two things
// stand in for the reader: this test binary is the `go build` output
// (the build line is not run), and the hub's address replaces
// your-server:6005. As root, the steps run as uid 65534 so that nothing
// lands in /etc or /var/lib.
func TestReadmeFirstRun(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed for the UnitConverter example plugin the README calls")
	}
	blocks := readmeBlocks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const key = "readme-K3y_first.run"
	hub, err := demohub.Start(demohub.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()

	// Not t.TempDir: its parent is 0700, closed to another uid.
	root, err := os.MkdirTemp("", "vcreadme")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	work, home, runtimeDir := filepath.Join(root, "src"), filepath.Join(root, "home"), filepath.Join(root, "run")
	for _, d := range []string{work, home, runtimeDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyTo(t, self, filepath.Join(work, "vcpnode"), 0o755)
	if out, err := exec.Command("cp", "-R", filepath.Join("..", "..", "examples"), work).CombinedOutput(); err != nil {
		t.Fatalf("copy examples: %v\n%s", err, out)
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		const nobody = 65534
		cred = &syscall.Credential{Uid: nobody, Gid: nobody}
		if err := os.Chmod(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil || p == root {
				return err
			}
			return os.Lchown(p, nobody, nobody)
		}); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, "XDG_RUNTIME_DIR=" + runtimeDir, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", asVCPNodeEnv + "=1"}
	shell := func(line string, stdin io.Reader, stdout, stderr io.Writer) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
		cmd.Dir, cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = work, env, stdin, stdout, stderr
		// Its own process group, so that a signal reaches vcpnode and not
		// only the shell; WaitDelay keeps a stray pipe holder from hanging Wait.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 10 * time.Second
		return cmd
	}
	step := func(line string, stdin string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := shell(line, strings.NewReader(stdin), &out, &errOut).Run(); err != nil {
			t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", line, err, &out, &errOut)
		}
		return out.String()
	}

	var daemon *exec.Cmd
	var daemonErr testlog.Buffer
	for _, line := range blocks[0] {
		switch {
		case strings.HasPrefix(line, "go build "):
			continue // this test binary is the build's output
		case strings.HasSuffix(line, "vcpnode run"):
			daemon = shell("exec "+line, nil, io.Discard, &daemonErr) // so that SIGTERM reaches vcpnode itself
			if err := daemon.Start(); err != nil {
				t.Fatal(err)
			}
		default:
			line = strings.ReplaceAll(line, "http://your-server:6005", hub.BaseURL())
			out := step(line, key+"\n")
			if strings.Contains(line, "config check") && !strings.Contains(out, "config OK") {
				t.Errorf("%s printed:\n%s", line, out)
			}
		}
	}
	if daemon == nil {
		t.Fatal("the first block has no vcpnode run")
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		syscall.Kill(-daemon.Process.Pid, syscall.SIGTERM)
		return daemon.Wait()
	}
	defer stop()
	acceptCtx, cancelAccept := context.WithTimeout(ctx, 30*time.Second)
	defer cancelAccept()
	conn, err := hub.Accept(acceptCtx)
	if err != nil {
		stop()
		t.Fatalf("%v; daemon stderr:\n%s", err, daemonErr.String())
	}
	reg, err := conn.WaitType(ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	if tools := reg.(wsproto.RegisterTools).Tools; len(tools) == 0 {
		t.Errorf("the node registered no tools: %+v", reg)
	}

	var outputs []string
	for _, line := range blocks[1] {
		outputs = append(outputs, step(line, ""))
	}
	all := strings.Join(outputs, "\n")
	for _, want := range []string{"connected for", "node name     laptop", "UnitConverter", "6.21371"} {
		if !strings.Contains(all, want) {
			t.Errorf("the second block's output lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all+daemonErr.String(), key) {
		t.Error("the key appears in the output")
	}
	if err := stop(); err != nil {
		t.Errorf("vcpnode run: %v\n%s", err, daemonErr.String())
	}
}

func copyTo(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, mode); err != nil {
		t.Fatal(err)
	}
}

// docExample returns the ```toml block and the output block that follow
// the marker in doc (a path from the repository's root): the config, the
// command line (its "$ " line) and what it prints.
func docExample(t *testing.T, doc, marker string) (config, command string, output []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("%s has no %q", doc, marker)
	}
	var blocks []string
	for len(blocks) < 2 {
		_, after, ok := strings.Cut(rest, "```")
		if !ok {
			t.Fatalf("fewer than two blocks after %q", marker)
		}
		body, after, ok := strings.Cut(after, "```")
		if !ok {
			t.Fatalf("an open block after %q", marker)
		}
		_, body, _ = strings.Cut(body, "\n") // the info string
		blocks, rest = append(blocks, body), after
	}
	lines := strings.Split(strings.TrimSuffix(blocks[1], "\n"), "\n")
	if !strings.HasPrefix(lines[0], "$ ") {
		t.Fatalf("the output block does not start with the command: %q", lines[0])
	}
	return blocks[0], strings.TrimPrefix(lines[0], "$ "), lines[1:]
}

// The `config check` example of docs/configuration.md is the real output,
// verbatim.
func TestReadmeConfigCheckExample(t *testing.T) {
	doc, command, want := docExample(t, "docs/configuration.md", "<!-- config-check-example")
	if _, err := user.LookupGroup("developers"); err == nil {
		t.Skip("this machine has a group named developers, which the example says is missing")
	}
	if _, err := os.Stat("/srv/vcp/Plugin"); err == nil {
		t.Skip("this machine has /srv/vcp/Plugin, which the example says is missing")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // the example names the file as given
	args := strings.Fields(command)
	if args[0] != "vcpnode" {
		t.Fatalf("command %q", command)
	}
	ta := newTestApp(t)
	if code := ta.run(args[1:]...); code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	got := strings.Split(strings.TrimSuffix(ta.stdout.String()+ta.stderr.String(), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/configuration.md shows\n%s\nthe command prints\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
}
