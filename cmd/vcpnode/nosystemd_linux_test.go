//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// noSystemdBlocks are the sh blocks of docs/service.md marked
// "<!-- no-systemd: NAME -->", by NAME.
func noSystemdBlocks(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "service.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	name, in := "", false
	var body []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "<!-- no-systemd: "):
			name = strings.TrimSuffix(strings.TrimPrefix(line, "<!-- no-systemd: "), " -->")
		case name != "" && line == "```sh":
			in, body = true, nil
		case in && line == "```":
			blocks[name], in, name = strings.Join(body, "\n")+"\n", false, ""
		case in:
			body = append(body, line)
		}
	}
	for _, want := range []string{"session", "tmux", "runit"} {
		if blocks[want] == "" {
			t.Fatalf("docs/service.md has no %q recipe (<!-- no-systemd: %s --> above an sh block)", want, want)
		}
	}
	return blocks
}

// recipeRig is a machine without systemd as a recipe sees it: vcpnode on
// PATH, a config found through $VCPNODE_CONFIG that connects to a fake
// server, a HOME of its own; everything owned by uid, who runs it.
type recipeRig struct {
	t    *testing.T
	hub  *demohub.Hub
	dir  string // HOME, and where everything else lives
	bin  string // the directory holding vcpnode
	cfg  string
	uid  int
	env  []string
	ctx  context.Context
	logs string // the daemon's log file, for a recipe that keeps one
}

func newRecipeRig(t *testing.T, uid int) *recipeRig {
	t.Helper()
	const key = "recipe-key-0123456789"
	hub, err := demohub.Start(demohub.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	// A short directory (a Unix socket path is short), readable by uid.
	dir, err := os.MkdirTemp("", "vr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	r := &recipeRig{t: t, hub: hub, dir: dir, bin: filepath.Join(dir, "bin"), cfg: filepath.Join(dir, "config.toml"), uid: uid}
	if err := os.Mkdir(r.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(builtBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.bin, "vcpnode"), exe, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := fmt.Sprintf("[hub]\nurl = %q\nkey = %q\nname = \"recipe\"\n\n[control]\nsocket = %q\n", hub.BaseURL(), key, filepath.Join(dir, "s.sock"))
	if err := os.WriteFile(r.cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if uid != os.Geteuid() {
		for _, p := range []string{dir, r.cfg} {
			if err := os.Chown(p, uid, uid); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A state directory of the test's own: as root the default would be
	// /var/lib/vcpnode.
	r.env = []string{"PATH=" + r.bin + ":/usr/bin:/bin", "HOME=" + dir, "VCPNODE_CONFIG=" + r.cfg, "TMUX_TMPDIR=" + dir, "LANG=C.UTF-8",
		"STATE_DIRECTORY=" + filepath.Join(dir, "state")}
	ctx, cancel := testwait.Long(t)
	t.Cleanup(cancel)
	r.ctx = ctx
	return r
}

// command runs name with the rig's environment, in its directory.
func (r *recipeRig) command(name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(r.ctx, name, args...)
	cmd.Env, cmd.Dir = r.env, r.dir
	if r.uid != os.Geteuid() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(r.uid), Gid: uint32(r.uid)}}
	}
	return cmd
}

// healthy is `vcpnode health`, as the recipe's user runs it.
func (r *recipeRig) healthy() bool {
	return r.command(filepath.Join(r.bin, "vcpnode"), "health").Run() == nil
}

// wantRegistered checks the node is connected to the fake server.
func (r *recipeRig) wantRegistered() {
	r.t.Helper()
	if len(r.hub.Conns()) == 0 {
		r.t.Error("the node never connected to the server")
	}
}

// runScript runs a recipe block with bash -e: every step must succeed.
func (r *recipeRig) runScript(script string) string {
	r.t.Helper()
	out, err := r.command("bash", "-e", "-c", script).CombinedOutput()
	if err != nil {
		r.t.Fatalf("the recipe failed: %v\n%s\n--- recipe:\n%s", err, out, script)
	}
	return string(out)
}

// TestNoSystemdRecipes runs docs/service.md's recipes for machines without
// systemd as written, against a fake server: a login session, tmux, runit,
// s6, and vcpnode as a container's PID 1. Each starts the node, sees
// `vcpnode health` pass, reloads it and stops it cleanly.
func TestNoSystemdRecipes(t *testing.T) {
	blocks := noSystemdBlocks(t)

	t.Run("session", func(t *testing.T) {
		r := newRecipeRig(t, os.Geteuid())
		r.runScript(blocks["session"]) // it waits for health: connected, tools registered
		log, err := os.ReadFile(filepath.Join(r.dir, "vcpnode.log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"config reloaded", "stopped"} {
			if !strings.Contains(string(log), want) {
				t.Errorf("the log lacks %q:\n%s", want, log)
			}
		}
	})

	t.Run("tmux", func(t *testing.T) {
		if _, err := exec.LookPath("tmux"); err != nil {
			t.Skip("tmux is not installed (Debian: apt-get install tmux)")
		}
		r := newRecipeRig(t, os.Geteuid())
		t.Cleanup(func() { _ = r.command("tmux", "kill-server").Run() })
		r.runScript(blocks["tmux"])
		testwait.For(t, "the tmux session to end with vcpnode", func() bool {
			return r.command("tmux", "has-session", "-t", "vcpnode").Run() != nil
		})
	})

	supervised := func(t *testing.T, run string, start func(svdir string) *exec.Cmd, reload, stop []string) {
		if os.Geteuid() != 0 {
			t.Skip("the recipe switches to a service user, which needs root")
		}
		r := newRecipeRig(t, 65534) // nobody stands in for the vcpnode user
		svdir := filepath.Join(r.dir, "sv", "vcpnode")
		if err := os.MkdirAll(svdir, 0o755); err != nil {
			t.Fatal(err)
		}
		run = strings.NewReplacer("vcpnode:vcpnode", "nobody:nogroup", "s6-setuidgid vcpnode", "s6-setuidgid nobody",
			"/etc/vcpnode/config.toml", r.cfg).Replace(run)
		if err := os.WriteFile(filepath.Join(svdir, "run"), []byte(run), 0o755); err != nil {
			t.Fatal(err)
		}
		sup := start(svdir)
		sup.Env, sup.Dir = append(r.env, "PATH="+r.bin+":/usr/bin:/bin:/usr/sbin:/sbin"), r.dir
		out := &testlog.Buffer{}
		sup.Stdout, sup.Stderr = out, out
		if err := sup.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = sup.Process.Kill()
			_ = sup.Wait()
		})
		testwait.For(t, "vcpnode health under the supervisor", r.healthy)
		r.wantRegistered()
		ctl := func(args []string) {
			t.Helper()
			cmd := exec.CommandContext(r.ctx, args[0], append(args[1:], svdir)...)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, b)
			}
		}
		ctl(reload)
		testwait.For(t, "the reload in the log", func() bool { return strings.Contains(out.String(), "config reloaded") })
		ctl(stop)
		testwait.For(t, "vcpnode to stop", func() bool { return !r.healthy() && strings.Contains(out.String(), "stopped") })
	}

	t.Run("runit", func(t *testing.T) {
		if _, err := exec.LookPath("runsv"); err != nil {
			t.Skip("runit is not installed (Debian: apt-get install runit)")
		}
		supervised(t, blocks["runit"], func(svdir string) *exec.Cmd { return exec.Command("runsv", svdir) },
			[]string{"sv", "hup"}, []string{"sv", "down"})
	})

	t.Run("s6", func(t *testing.T) {
		if _, err := exec.LookPath("s6-supervise"); err != nil {
			t.Skip("s6 is not installed (Debian: apt-get install s6)")
		}
		run := strings.Replace(blocks["runit"], "chpst -u vcpnode:vcpnode", "s6-setuidgid vcpnode", 1)
		supervised(t, run, func(svdir string) *exec.Cmd { return exec.Command("s6-supervise", svdir) },
			[]string{"s6-svc", "-h"}, []string{"s6-svc", "-d"})
	})

	t.Run("container PID 1", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("a new PID namespace needs root here")
		}
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("unshare is not installed (util-linux)")
		}
		r := newRecipeRig(t, 0)
		cmd := r.command("unshare", "--pid", "--fork", "--kill-child", "--mount-proc", filepath.Join(r.bin, "vcpnode"), "run")
		out := &testlog.Buffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		testwait.For(t, "vcpnode health of the container's PID 1", r.healthy)
		r.wantRegistered()
		pid := pidOneOf(t, cmd.Process.Pid)
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil { // docker stop
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("vcpnode as PID 1 after SIGTERM: %v\n%s", err, out.String())
			}
		case <-r.ctx.Done():
			t.Fatalf("vcpnode as PID 1 did not stop on SIGTERM\n%s", out.String())
		}
	})
}

// pidOneOf is, in the root namespace, the pid of the PID 1 that unshare
// (parent) forked: its only child, which must be 1 in its own namespace.
func pidOneOf(t *testing.T, parent int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", parent, parent))
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil {
		t.Fatalf("unshare's child: %q: %v", b, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "NSpid:" && f[len(f)-1] != "1" {
			t.Fatalf("vcpnode is pid %s in its namespace, not 1", f[len(f)-1])
		}
	}
	return pid
}
