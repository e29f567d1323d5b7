package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testwait"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// confinedEnv starts commands through the launcher, as a tool's are.
type confinedEnv struct {
	sb    *Sandbox
	trees *proctree.Manager
	dir   string   // the tool's own folder
	stdin *os.File // nil: /dev/null
}

// newConfinedEnv makes a sandbox with the built-ins plus specs; it skips,
// saying why, where Landlock is missing.
func newConfinedEnv(t testing.TB, specs map[string]Spec) *confinedEnv {
	t.Helper()
	return newConfinedEnvMode(t, specs, proctree.ModeAuto)
}

// newConfinedEnvMode is newConfinedEnv with its process trees in mode.
// VCPNODE_TEST_NO_NS=1 switches the call namespaces off for the whole run
// (to watch the attack tests fail without them).
func newConfinedEnvMode(t testing.TB, specs map[string]Spec, mode proctree.Mode) *confinedEnv {
	t.Helper()
	profiles, err := Resolve(specs)
	if err != nil {
		t.Fatal(err)
	}
	trees, err := proctree.New(proctree.Options{Mode: mode, Log: zerolog.Nop()})
	if err != nil {
		t.Skipf("no process trees here: %v", err)
	}
	t.Cleanup(trees.Close)
	sb, err := New(Options{Profiles: profiles, TempDir: t.TempDir(), Home: t.TempDir(), Trees: trees, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if !sb.Capabilities().Files {
		t.Skipf("Landlock is not available here: %s", sb.Capabilities().Why)
	}
	e := &confinedEnv{sb: sb, trees: trees, dir: t.TempDir()}
	if os.Getenv("VCPNODE_TEST_NO_NS") == "1" {
		e.withoutNamespaces()
	}
	return e
}

// withoutNamespaces switches the call namespaces off: calls run in the
// machine's PID and mount namespaces, as where the kernel refuses them.
func (e *confinedEnv) withoutNamespaces() *confinedEnv {
	noNamespaces(e.sb)
	return e
}

func noNamespaces(sb *Sandbox) {
	sb.caps.PidNS, sb.caps.PrivateShm, sb.caps.UserNS = false, false, false
}

// needNamespaces skips, saying why, where calls get no namespaces.
func (e *confinedEnv) needNamespaces(t *testing.T) {
	t.Helper()
	if !e.sb.caps.PidNS && e.sb.caps.NSWhy != "" {
		t.Skipf("no namespaces for calls here: %s", e.sb.caps.NSWhy)
	}
}

// run starts argv under profile and returns its stdout, stderr and exit code.
func (e *confinedEnv) run(t *testing.T, profile string, argv ...string) (stdout, stderr string, code int) {
	t.Helper()
	stdout, stderr, code, _ = e.runEnv(t, profile, os.Environ(), argv...)
	return stdout, stderr, code
}

// runEnv is run with env for the command's environment; explained is
// what the run's Explain makes of a failed exit and its stderr.
func (e *confinedEnv) runEnv(t *testing.T, profile string, env []string, argv ...string) (stdout, stderr string, code int, explained error) {
	t.Helper()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.sb.Wrap(Command{Tool: "probe", Profile: profile, Path: path, Args: argv, Env: env, Dir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	if e.stdin != nil {
		devnull = e.stdin
	}
	proc, tree, err := r.StartProcess(e.trees, &os.ProcAttr{Dir: e.dir, Files: []*os.File{devnull, outW, errW}})
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		t.Fatalf("start %v: %v", argv, err)
	}
	var ob, eb bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&eb, errR); close(done) }()
	_, _ = io.Copy(&ob, outR)
	state, err := proc.Wait()
	if err != nil {
		t.Fatal(err)
	}
	_ = tree.KillAndWait(5e9)
	tree.Release()
	<-done
	outR.Close()
	errR.Close()
	if code = state.ExitCode(); code != 0 {
		explained = r.Explain(fmt.Errorf("exit status %d: %s", code, eb.String()), eb.Bytes())
	}
	return ob.String(), eb.String(), code, explained
}

// sh runs script with sh -c under profile.
func (e *confinedEnv) sh(t *testing.T, profile, script string) (stdout, stderr string, code int) {
	t.Helper()
	return e.run(t, profile, "sh", "-c", script)
}

// TestLaunchConfinesTheCommand: the command starts through the launcher
// with no_new_privs and Landlock in force, under its own argv, with none of
// the launcher's files left open.
func TestLaunchConfinesTheCommand(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `grep NoNewPrivs /proc/self/status; echo "argv0=$0"; cat ` + outside + ` 2>/dev/null || echo refused
for f in 3 4 5 6 7; do [ -e /proc/$$/fd/$f ] && echo "open fd $f"; done; exit 3`
	out, stderr, code := e.run(t, Default, "sh", "-c", script, "named")
	if code != 3 {
		t.Fatalf("exit %d, want 3; stderr %q", code, stderr)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "argv0=named", "refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "open fd") || strings.Contains(out, "SECRET") {
		t.Errorf("the command got more than it should:\n%s", out)
	}
	// The same command unconfined reads the file: the refusal is the sandbox's.
	out, _, _ = e.run(t, None, "sh", "-c", "cat "+outside)
	if out != "SECRET" {
		t.Errorf("unconfined: %q", out)
	}
}

// TestLaunchReportsExecErrors: a command that cannot be exec'd fails to
// start with the error a plain start gives, and leaves nothing running.
func TestLaunchReportsExecErrors(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	notExec := filepath.Join(e.dir, "data.txt")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
	}{{notExec, fs.ErrPermission}, {filepath.Join(e.dir, "missing"), fs.ErrNotExist}} {
		r, err := e.sb.Wrap(Command{Tool: "probe", Profile: Default, Path: c.path, Args: []string{c.path}, Dir: e.dir})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = r.StartProcess(e.trees, &os.ProcAttr{Dir: e.dir})
		r.Close()
		var pe *os.PathError
		if !errors.As(err, &pe) || pe.Path != c.path || !errors.Is(err, c.want) {
			t.Errorf("start %s: %v (%T), want a *PathError for it that is %v", c.path, err, err, c.want)
		}
	}
}

// TestLaunchEndsAsTheCommand: with the launcher staying as the PID
// namespace's keeper, the daemon still sees the command's own end — its
// exit code, the signal that killed it — when the command ends, while what
// it left running keeps working (an async plugin's worker) until it ends
// too, and the namespace with it.
func TestLaunchEndsAsTheCommand(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	e.needNamespaces(t)
	start := func(script string) (*os.Process, *proctree.Tree, *Run) {
		t.Helper()
		r, err := e.sb.Wrap(Command{Tool: "probe", Profile: Default, Path: "/bin/sh", Args: []string{"sh", "-c", script},
			Env: []string{"PATH=/usr/bin:/bin"}, Dir: e.dir})
		if err != nil {
			t.Fatal(err)
		}
		proc, tree, err := r.StartProcess(e.trees, &os.ProcAttr{Dir: e.dir})
		if err != nil {
			t.Fatal(err)
		}
		return proc, tree, r
	}
	proc, tree, r := start("kill -TERM $$")
	state, err := proc.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("a command killed by SIGTERM: %v, want the same end", state)
	}
	_ = tree.KillAndWait(5e9)
	tree.Release()
	r.Close()

	// A worker left behind waits on a FIFO, then writes its result.
	fifo, result := filepath.Join(e.dir, "go"), filepath.Join(e.dir, "result")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	proc, tree, r = start(`(read x < ` + fifo + `; echo "worked $x" > ` + result + `) </dev/null >/dev/null 2>&1 & exit 4`)
	defer r.Close()
	defer tree.Release()
	if state, err := proc.Wait(); err != nil || state.ExitCode() != 4 {
		t.Fatalf("the command's end: %v %v, want exit 4", state, err)
	}
	if !tree.Alive() {
		t.Fatal("the worker ended with the command")
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("late\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	testwait.For(t, "the namespace to end after its last process", func() bool { return !tree.Alive() })
	if b, err := os.ReadFile(result); err != nil || string(b) != "worked late\n" {
		t.Errorf("the worker's result: %q %v", b, err)
	}
}

// TestProbeSeesTheNamespaces: `sandbox check`'s probe, a command started
// as a tool's, finds each protection it looks for in force — the PID
// namespace with the launcher's init as PID 1, its own /proc and /dev/shm
// among them — and, with the namespaces switched off, says those are not.
func TestProbeSeesTheNamespaces(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	e.needNamespaces(t)
	nsLines := []string{"probe: a PID namespace of its own", "probe: a /proc of its own", "probe: a /dev/shm of its own"}
	ps, err := e.sb.Probe(e.trees, Default, os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Protection{}
	for _, p := range ps {
		got[p.Name] = p
		if p.State != StateEnforced {
			t.Errorf("%s: %s (%s)", p.Name, p.State, p.Detail)
		}
	}
	for _, name := range nsLines {
		if _, ok := got[name]; !ok {
			t.Errorf("no line %q in %v", name, ps)
		}
	}
	ps, err = newConfinedEnv(t, nil).withoutNamespaces().sb.Probe(e.trees, Default, os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if slices.Contains(nsLines, p.Name) && p.State != StateNotEnforced {
			t.Errorf("without namespaces, %s: %s (%s)", p.Name, p.State, p.Detail)
		}
	}
}
