//go:build unix

package plugin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// The warm path must be invisible to a plugin: these tests run the same
// calls cold and warm and compare the results byte for byte, and check
// that no interpreter outlives its pool.

// systemPath is the PATH the warm tests give plugins: the system's
// python3, not a version manager's shim in a home directory.
const systemPath = "/usr/local/bin:/usr/bin:/bin"

// needPython skips, saying why, where the system has no python3.
func needPython(t testing.TB) {
	t.Helper()
	if lookPath("python3", systemPath) == "" {
		t.Skipf("no python3 in %s", systemPath)
	}
}

// warmEnviron is the daemon environment of the warm tests.
func warmEnviron(t testing.TB) func() []string {
	home := t.TempDir()
	return func() []string { return []string{"PATH=" + systemPath, "HOME=" + home, "LANG=C.UTF-8"} }
}

// probePy prints what a fresh start gives a script; values that differ
// between any two runs (the per-run temporary directory, the tree marker)
// are replaced by what is checked about them.
const probePy = `import json, os, sys
data = sys.stdin.read()
if "raise" in data:
    raise ValueError("asked to fail: " + data)
if "exit" in data:
    sys.stderr.write("leaving with 3\n")
    sys.exit(3)
tmp = os.environ.get("TMPDIR", "")
env = {k: ("<per-run>" if k in ("TMPDIR", "TMP", "TEMP", "VCPNODE_PROCTREE") else v) for k, v in os.environ.items()}
out = {
    "argv": sys.argv, "orig_argv": getattr(sys, "orig_argv", None), "cwd": os.getcwd(),
    "path0": sys.path[0], "name": __name__, "file": __file__, "stdin": data, "env": env,
    "globals": list(globals()), "modules": sorted(sys.modules),
    "fds": sorted(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None,
    "tmp_fresh": bool(tmp) and os.path.isdir(tmp) and os.listdir(tmp) == [],
    "loader": type(__loader__).__name__, "spec": repr(__spec__), "cached": repr(__cached__),
    "stdout_isatty": sys.stdout.isatty(), "stdin_encoding": sys.stdin.encoding,
}
print(json.dumps({"status": "success", "result": out}, sort_keys=True))
`

// writeProbe makes the plugin WarmProbe in root.
func writeProbe(t testing.TB, root string) {
	dir := filepath.Join(root, "WarmProbe")
	writeFile(t, dir, manifestFile, `{"name":"WarmProbe","pluginType":"synchronous",
		"entryPoint":{"command":"python3 probe.py first --second"}}`)
	writeFile(t, dir, "probe.py", probePy)
	writeFile(t, dir, configEnvFile, "PROBE_SETTING=from config.env\n")
}

// warmHost is a host whose plugins run the system's python3.
func warmHost(t testing.TB, opts Options) *Host {
	needPython(t)
	return interpreterHost(t, opts)
}

// interpreterHost is a host with the warm tests' environment and a grace
// before the kill.
func interpreterHost(t testing.TB, opts Options) *Host {
	opts.Environ = warmEnviron(t)
	if opts.KillGrace == 0 {
		opts.KillGrace = 2e9
	}
	return newHost(t, opts)
}

// waitWarm waits until n interpreters wait in h's pools.
func waitWarm(t testing.TB, h *Host, n int) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("%d warm interpreters", n), func() bool { return h.WarmWaiting() >= n })
}

// waitingPids are the pids of the interpreters waiting in h's pools.
func waitingPids(h *Host) []int {
	h.warmMu.Lock()
	defer h.warmMu.Unlock()
	var pids []int
	for _, pl := range h.pools {
		pl.mu.Lock()
		for _, w := range pl.idle {
			pids = append(pids, w.p.pid)
		}
		pl.mu.Unlock()
	}
	slices.Sort(pids)
	return pids
}

// outcome renders a call's result or error, the way the node sends it.
func outcome(t testing.TB, res any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return asJSON(t, res)
}

// TestWarmMatchesCold runs the same calls cold and then warm, over the
// probe (argv, env, cwd, sys.path[0], __name__, stdin, modules, fds, an
// uncaught exception, sys.exit) and the example UnitConverter: the
// results must be byte-identical, and every warm call served warm.
func TestWarmMatchesCold(t *testing.T) {
	h := warmHost(t, Options{})
	root := pluginRoot(t)
	writeProbe(t, root)
	copyDir(t, filepath.Join("..", "..", "examples", "Plugin", "UnitConverter"), filepath.Join(root, "UnitConverter"))
	set := scan(t, h, root)
	probe, units := findTool(t, set, "WarmProbe"), findTool(t, set, "UnitConverter")

	type callCase struct {
		tool toolhost.Tool
		args map[string]string
	}
	var calls []callCase
	for i := range 12 {
		calls = append(calls,
			callCase{probe, map[string]string{"n": strconv.Itoa(i), "text": "héllo\n\"quoted\""}},
			callCase{units, map[string]string{"command": "Convert", "value": strconv.Itoa(i * 7), "from": "km", "to": "mi"}})
	}
	calls = append(calls,
		callCase{probe, map[string]string{"do": "raise"}},
		callCase{probe, map[string]string{"do": "exit"}},
		callCase{probe, nil},
		callCase{units, map[string]string{"command": "ListUnits"}},
		callCase{units, map[string]string{"command": "Convert", "value": "x", "from": "kg", "to": "mi"}})

	run := func() []string {
		var out []string
		for _, c := range calls {
			if len(h.pools) > 0 {
				waitWarm(t, h, 2)
			}
			res, err := call(context.Background(), c.tool, c.args)
			out = append(out, outcome(t, res, err))
		}
		return out
	}
	cold := run()
	if notes := h.Warm(set, WarmConfig{Languages: []string{WarmPython}}); len(notes) > 0 {
		t.Fatalf("notes: %q", notes)
	}
	before := h.WarmCalls()
	warm := run()
	if got := h.WarmCalls() - before; got != uint64(len(calls)) {
		t.Errorf("%d of %d calls ran warm", got, len(calls))
	}
	for i := range calls {
		if cold[i] != warm[i] {
			t.Errorf("call %d differs:\ncold: %s\nwarm: %s", i, cold[i], warm[i])
		}
	}
	t.Logf("a probe result: %s", cold[0])
	t.Logf("the exception: %s", cold[len(cold)-5])
}

// TestWarmSelection: only python commands the warm path understands are
// warmed; a plugin named warm that cannot be says why, and [tools] false
// wins over the language.
func TestWarmSelection(t *testing.T) {
	h := warmHost(t, Options{})
	root := pluginRoot(t)
	writeProbe(t, root)
	for name, command := range map[string]string{
		"Shell": "python3 probe.py | cat", "Options": "python3 -u probe.py", "Sh": "sh probe.sh",
		"Off": "python3 probe.py",
	} {
		dir := filepath.Join(root, name)
		writeFile(t, dir, manifestFile, fmt.Sprintf(`{"name":%q,"pluginType":"synchronous","entryPoint":{"command":%q}}`, name, command))
		writeFile(t, dir, "probe.py", "print('{}')\n")
		writeFile(t, dir, "probe.sh", "echo {}\n")
	}
	set := scan(t, h, root)
	notes := h.Warm(set, WarmConfig{Languages: []string{WarmPython}, Tools: map[string]bool{"Sh": true, "Off": false}})
	want := []string{
		`plugin "Options" runs cold, not warm: its command passes no script, or options, to python`,
		`plugin "Sh" runs cold, not warm: its command runs sh, not python or node on a script`,
		`plugin "Shell" runs cold, not warm: its command runs under a shell`,
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes:\n%q\nwant\n%q", notes, want)
	}
	waitWarm(t, h, 1)
	h.warmMu.Lock()
	var names []string
	for spec := range h.pools {
		names = append(names, spec.name)
	}
	h.warmMu.Unlock()
	if !slices.Equal(names, []string{"WarmProbe"}) {
		t.Errorf("pools for %q, want only WarmProbe", names)
	}
}

// TestWarmNoLeak: for Python (with and without preloaded modules) and
// Node.js, a reload (Warm again), a plugin removed by a rescan, a waiting
// interpreter killed with SIGKILL, and Close each leave no interpreter
// behind; a killed one is replaced.
func TestWarmNoLeak(t *testing.T) {
	langs := []struct {
		name, lang, folder string
		preload            []string
		host               func(testing.TB, Options) *Host
		write              func(testing.TB, string)
	}{
		{WarmPython, WarmPython, "WarmProbe", nil, warmHost, writeProbe},
		{"python-preload", WarmPython, "Preload", preloadAll, warmHost, writePreload},
		{WarmNode, WarmNode, "NodeProbe", nil, nodeHost, func(t testing.TB, root string) {
			writeNodePlugins(t, root)
			for _, other := range []string{"CjsProbe", "VcpLike", "EsmProbe", "TypeModule"} {
				if err := os.RemoveAll(filepath.Join(root, other)); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, l := range langs {
		for _, mode := range []proctree.Mode{proctree.ModeCgroup, proctree.ModeSubreaper} {
			t.Run(l.name+"/"+mode.String(), func(t *testing.T) {
				cfg := WarmConfig{Languages: []string{l.lang}, Size: 2, Preload: map[string][]string{l.folder: l.preload}}
				warmNoLeak(t, mode, cfg, l.folder, l.host, l.write)
			})
		}
	}
}

// warmNoLeak is TestWarmNoLeak for one language: write makes the one plugin
// of that language in root, in folder; cfg warms it, two at a time.
func warmNoLeak(t *testing.T, mode proctree.Mode, cfg WarmConfig, folder string, host func(testing.TB, Options) *Host, write func(testing.TB, string)) {
	trees := proctreetest.Manager(t, mode)
	h := host(t, Options{ProcessTrees: trees})
	root := pluginRoot(t)
	write(t, root)
	set := scan(t, h, root)
	h.Warm(set, cfg)
	waitWarm(t, h, 2)
	gone := func(what string, pids []int) {
		t.Helper()
		for _, pid := range pids {
			if !proctreetest.Collected(pid) {
				t.Errorf("%s: interpreter %d still there", what, pid)
			}
		}
	}

	first := waitingPids(h)
	h.Warm(scan(t, h, root), cfg) // a reload: Warm returns once the old pool is gone
	gone("reload", first)
	waitWarm(t, h, 2)

	second := waitingPids(h)
	if err := syscall.Kill(second[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the killed interpreter to be replaced", func() bool {
		now := waitingPids(h)
		return len(now) == 2 && !slices.Contains(now, second[0])
	})
	testwait.For(t, "the killed interpreter to be collected", func() bool { return proctreetest.Collected(second[0]) })

	third := waitingPids(h)
	if err := os.RemoveAll(filepath.Join(root, folder)); err != nil {
		t.Fatal(err)
	}
	h.Warm(scan(t, h, root), cfg)
	gone("plugin removed", third)
	if n := h.Running(); n != 0 {
		t.Errorf("%d processes tracked after the plugin was removed", n)
	}

	write(t, root)
	h.Warm(scan(t, h, root), cfg)
	waitWarm(t, h, 2)
	last := waitingPids(h)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	gone("shutdown", last)
	if cfg.Languages[0] == WarmNode && h.bootDir == "" {
		t.Error("no node bootstrap was written")
	}
	if _, err := os.Stat(h.bootDir); h.bootDir != "" && !os.IsNotExist(err) {
		t.Errorf("the node bootstrap's folder %s is still there after Close: %v", h.bootDir, err)
	}
}

// TestWarmCrashLoopRunsCold: interpreters that die before any call make
// the pool give up; calls still run, cold.
func TestWarmCrashLoopRunsCold(t *testing.T) {
	h := warmHost(t, Options{})
	root := pluginRoot(t)
	writeProbe(t, root)
	// sitecustomize runs before the bootstrap: this one kills every start
	// that is not a plain script run.
	writeFile(t, filepath.Join(root, "WarmProbe"), configEnvFile, "PYTHONPATH="+filepath.Join(root, "WarmProbe", "site")+"\n")
	writeFile(t, filepath.Join(root, "WarmProbe", "site"), "sitecustomize.py",
		"import sys, os\nif '-c' in sys.orig_argv:\n    os._exit(9)\n")
	set := scan(t, h, root)
	h.Warm(set, WarmConfig{Languages: []string{WarmPython}})
	pl := func() *pool {
		h.warmMu.Lock()
		defer h.warmMu.Unlock()
		for _, p := range h.pools {
			return p
		}
		return nil
	}()
	testwait.For(t, "the pool to give up", func() bool { pl.mu.Lock(); defer pl.mu.Unlock(); return pl.off && pl.starting == 0 })
	if _, err := call(context.Background(), findTool(t, set, "WarmProbe"), map[string]string{"n": "1"}); err != nil {
		t.Fatal(err)
	}
	if h.WarmCalls() != 0 {
		t.Error("a call ran warm")
	}
}

// TestWarmPythonBootstrapAlone checks the bootstrap's handshake outside
// the host: "r" on fd 3, then end of input exits with status 0 and prints
// nothing.
func TestWarmPythonBootstrapAlone(t *testing.T) {
	needPython(t)
	py := lookPath("python3", systemPath)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(py, "-c", pythonBootstrap, "nothing.py")
	cmd.ExtraFiles = []*os.File{w}
	out, err := cmd.CombinedOutput() // stdin is /dev/null: end of input at once
	w.Close()
	if err != nil || len(out) > 0 {
		t.Fatalf("bootstrap: %v, output %q", err, out)
	}
	b := make([]byte, 2)
	n, _ := r.Read(b)
	if string(b[:n]) != string(rune(warmReady)) {
		t.Errorf("fd 3 said %q, want %q", b[:n], string(rune(warmReady)))
	}
}
