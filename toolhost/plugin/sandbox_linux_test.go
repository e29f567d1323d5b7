package plugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testnet"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// sandboxEnv is one confined plugin host: a home holding a secret, the
// node's own files (protected), and a folder outside every grant.
type sandboxEnv struct {
	home, secret, outside string
	keyFile, configFile   string
	etc                   string // a readable tree holding the node's files
	sb                    *sandbox.Sandbox
	host                  *Host
	root                  string
}

// newSandboxEnv confines the plugin "Probe" under profile, the specs added
// to the built-ins. It skips, saying why, where Landlock is missing.
func newSandboxEnv(t *testing.T, profile string, specs map[string]sandbox.Spec) *sandboxEnv {
	t.Helper()
	return newSandboxEnvTemp(t, profile, specs, t.TempDir())
}

// newSandboxEnvTemp is newSandboxEnv with the calls' temporary
// directories made in tempDir.
func newSandboxEnvTemp(t *testing.T, profile string, specs map[string]sandbox.Spec, tempDir string) *sandboxEnv {
	t.Helper()
	e := &sandboxEnv{home: t.TempDir(), outside: t.TempDir(), etc: t.TempDir()}
	e.secret = writeFile(t, e.home, ".ssh/id_ed25519", "SECRET-KEY-MATERIAL\n")
	e.keyFile = writeFile(t, e.etc, "vcpnode/key", "VCP-KEY\n")
	e.configFile = writeFile(t, e.etc, "vcpnode/config.toml", "[server]\n")
	writeFile(t, e.etc, "vcpnode/other.txt", "OTHER\n")
	writeFile(t, e.etc, "hosts", "HOSTS\n")
	if specs == nil {
		specs = map[string]sandbox.Spec{}
	}
	specs["withetc"] = sandbox.Spec{Extends: "default", Read: []string{e.etc}}
	profiles, err := sandbox.Resolve(specs)
	if err != nil {
		t.Fatal(err)
	}
	trees, err := proctree.New(proctree.Options{Log: testLog(t)})
	if err != nil {
		t.Skipf("no process trees here: %v", err)
	}
	t.Cleanup(trees.Close)
	e.sb, err = sandbox.New(sandbox.Options{
		Profiles: profiles, Tools: map[string]string{"Probe": profile},
		Protected: []string{e.keyFile, e.configFile}, Home: e.home, TempDir: tempDir,
		Trees: trees, Log: testLog(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.NeedFiles(t, e.sb.Capabilities())
	e.host = newHost(t, Options{Sandbox: e.sb, ProcessTrees: trees, KillGrace: 100e6})
	e.root = pluginRoot(t)
	return e
}

// run writes script as the plugin's body and calls it.
func (e *sandboxEnv) run(t *testing.T, script string) (string, error) {
	t.Helper()
	dir := filepath.Join(e.root, "Probe")
	writeFile(t, dir, manifestFile, `{"name":"Probe","pluginType":"synchronous","entryPoint":{"command":"sh probe.sh"}}`)
	writeFile(t, dir, "probe.sh", script)
	set := scan(t, e.host, e.root)
	res, err := call(context.Background(), findTool(t, set, "Probe"), nil)
	if err != nil {
		return "", err
	}
	if res == nil {
		return "", nil
	}
	return textOf(t, res), nil
}

// try prints "NAME ok" or "NAME refused" for each check.
const tryFunc = `try() { n=$1; shift; if "$@" >/dev/null 2>&1; then echo "$n ok"; else echo "$n refused"; fi; }
`

func wantLines(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got+"\n", w+"\n") {
			t.Errorf("output lacks %q:\n%s", w, got)
		}
	}
}

// TestSandboxDefaultFiles: under default a plugin reads the system, not
// the home directory; it writes its folder and its temp dir, nothing else.
func TestSandboxDefaultFiles(t *testing.T) {
	e := newSandboxEnv(t, "default", nil)
	out, err := e.run(t, tryFunc+fmt.Sprintf(`
try read-system cat /etc/hostname /usr/bin/env
try read-home cat %q
try list-home ls %q
try write-outside sh -c 'echo x > %s/x'
try write-folder sh -c 'echo x > ./made-here'
try write-tmp sh -c 'echo x > "$TMPDIR/t" && cat "$TMPDIR/t"'
echo "tmp=$TMPDIR"
`, e.secret, e.home, e.outside))
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, out, "read-system ok", "read-home refused", "list-home refused",
		"write-outside refused", "write-folder ok", "write-tmp ok")
	if _, err := os.Stat(filepath.Join(e.outside, "x")); err == nil {
		t.Error("the plugin wrote outside its folder")
	}
	// The per-call temporary directory is gone after the call.
	for _, line := range strings.Split(out, "\n") {
		if tmp, ok := strings.CutPrefix(line, "tmp="); ok {
			testwait.For(t, "the call's temp dir to be removed", func() bool { _, err := os.Stat(tmp); return err != nil })
		}
	}
}

// TestSandboxRefusalNamesProfile: a run failing on a refused read is an
// error naming the profile, the refused path and the config that grants it.
func TestSandboxRefusalNamesProfile(t *testing.T) {
	e := newSandboxEnv(t, "default", nil)
	_, err := e.run(t, fmt.Sprintf("cat %q\n", e.secret))
	if err == nil {
		t.Fatal("reading the home directory succeeded")
	}
	for _, want := range []string{`plugin "Probe" was refused by the node's sandbox (profile "default"): read ` + e.secret, "Permission denied",
		"[sandbox.profiles.probe]\nextends = \"default\"\nread = [\"~/.ssh\"]\n\n[tools.Probe]\nsandbox = \"probe\"\n"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	t.Logf("the error: %v", err)
	if strings.Contains(err.Error(), "SECRET-KEY-MATERIAL") {
		t.Error("the secret leaked")
	}
}

// TestSandboxNodeFilesProtected: a profile granting a tree that holds the
// node's key file and config still cannot read those two, but reads the
// tree's other entries.
func TestSandboxNodeFilesProtected(t *testing.T) {
	e := newSandboxEnv(t, "withetc", nil)
	out, err := e.run(t, tryFunc+fmt.Sprintf(`
try read-key cat %q
try read-config cat %q
try read-sibling cat %q
try read-other cat %q
`, e.keyFile, e.configFile, filepath.Join(e.etc, "vcpnode/other.txt"), filepath.Join(e.etc, "hosts")))
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, out, "read-key refused", "read-config refused", "read-sibling ok", "read-other ok")
}

// TestSandboxSetsidGrandchild: a grandchild in a session of its own is as
// confined as the plugin.
func TestSandboxSetsidGrandchild(t *testing.T) {
	e := newSandboxEnv(t, "default", nil)
	out, err := e.run(t, tryFunc+fmt.Sprintf(`
setsid -w sh -c '%s try gc-read-home cat %q; try gc-write-outside sh -c "echo x > %s/gc"; try gc-write-tmp sh -c "echo x > \$TMPDIR/gc"'
`, strings.ReplaceAll(tryFunc, "'", `'"'"'`), e.secret, e.outside))
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, out, "gc-read-home refused", "gc-write-outside refused", "gc-write-tmp ok")
}

// TestSandboxNoneConfinesNothing: "none" reads the home and writes anywhere.
func TestSandboxNoneConfinesNothing(t *testing.T) {
	e := newSandboxEnv(t, "none", nil)
	out, err := e.run(t, tryFunc+fmt.Sprintf(`
try read-home cat %q
try write-outside sh -c 'echo x > %s/x'
try read-key cat %q
`, e.secret, e.outside, e.keyFile))
	if err != nil {
		t.Fatal(err)
	}
	wantLines(t, out, "read-home ok", "write-outside ok", "read-key ok")
}

// listen opens a loopback listener that accepts and closes connections.
func listen(t *testing.T) int {
	return testnet.ClosingListener(t).Addr().(*net.TCPAddr).Port
}

// connectScript tries a TCP connect to each port with bash's /dev/tcp.
func connectScript(ports ...int) string {
	s := tryFunc
	for _, p := range ports {
		s += fmt.Sprintf("try connect-%d bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d'\n", p, p)
	}
	return s
}

// TestSandboxNetwork: default connects, offline does not, connect_ports
// lets its port through and refuses another.
func TestSandboxNetwork(t *testing.T) {
	a, b := listen(t), listen(t)
	for _, c := range []struct {
		profile string
		want    []string
	}{
		{"default", []string{fmt.Sprintf("connect-%d ok", a), fmt.Sprintf("connect-%d ok", b)}},
		{"offline", []string{fmt.Sprintf("connect-%d refused", a), fmt.Sprintf("connect-%d refused", b)}},
		{"oneport", []string{fmt.Sprintf("connect-%d ok", a), fmt.Sprintf("connect-%d refused", b)}},
	} {
		t.Run(c.profile, func(t *testing.T) {
			e := newSandboxEnv(t, c.profile, map[string]sandbox.Spec{
				"oneport": {Extends: "default", ConnectPorts: []int{a}}})
			sandboxtest.NeedNetwork(t, e.sb.Capabilities())
			out, err := e.run(t, connectScript(a, b))
			if err != nil {
				t.Fatal(err)
			}
			wantLines(t, out, c.want...)
		})
	}
}

// TestSandboxLimits: a 1 GiB allocation under memory = "64MiB" and a fork
// loop under pids = 32 end as errors naming the limit, leave no process
// behind, and the host keeps serving.
func TestSandboxLimits(t *testing.T) {
	for _, c := range []struct {
		name, script, want string
		cap                func(sandbox.Capabilities) string
	}{
		{"memory", "/usr/bin/python3 -c 'b = b\"x\" * (1 << 30); print(len(b))'\n",
			"memory limit 64MiB reached", func(c sandbox.Capabilities) string { return c.Memory }},
		{"pids", "while :; do sleep 600 & done\n",
			"pids limit 32 reached", func(c sandbox.Capabilities) string { return c.Pids }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newSandboxEnv(t, "limited", map[string]sandbox.Spec{
				"limited": {Extends: "default", Memory: "64MiB", Pids: 32}})
			if how := c.cap(e.sb.Capabilities()); !strings.HasPrefix(how, "cgroup") {
				t.Skipf("no cgroup for the %s limit here (%q)", c.name, how)
			}
			_, err := e.run(t, c.script)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `profile "limited"`) {
				t.Fatalf("want an error naming %q and the profile, got %v", c.want, err)
			}
			t.Logf("the error: %v", err)
			testwait.For(t, "every process of the run to end", func() bool { return e.host.Running() == 0 })
			out, err := e.run(t, "echo still serving\n")
			if err != nil || out != "still serving" {
				t.Errorf("next call: %q, %v", out, err)
			}
		})
	}
}

// TestSandboxUnknownProfile: a plugin naming an unknown profile does not run.
func TestSandboxUnknownProfile(t *testing.T) {
	e := newSandboxEnv(t, "default", nil)
	err := e.sb.Update(sandbox.Options{Tools: map[string]string{"Probe": "nosuch"}})
	if !errors.Is(err, sandbox.ErrUnknownProfile) {
		t.Fatalf("Update with an unknown profile: %v", err)
	}
}

// TestSandboxDaemonStaysFree: confined starts leave the host's own threads
// unconfined: it still reads what its plugins may not, from any goroutine,
// and no thread but a parked main thread carries no_new_privs.
func TestSandboxDaemonStaysFree(t *testing.T) {
	e := newSandboxEnv(t, "default", nil)
	for range 5 {
		if _, err := e.run(t, "echo hi\n"); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 64)
	for range cap(errs) {
		go func() { _, err := os.ReadFile(e.secret); errs <- err }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Fatalf("the host itself was confined: %v", err)
		}
	}
	// The threads the starts ran on end right after them.
	testwait.For(t, "the confined threads to end", func() bool { return len(restrictedThreads(t)) == 0 })
}

// TestSandboxDaemonLeavesTheLimitGroups: once a confined start returns, no
// thread of the host is in the run's limit groups, the parked main thread
// included: a host thread there would make the host the kernel's victim
// when the command reaches its memory limit.
func TestSandboxDaemonLeavesTheLimitGroups(t *testing.T) {
	e := newSandboxEnv(t, "limited", map[string]sandbox.Spec{"limited": {Extends: "default", Memory: "64MiB"}})
	if how := e.sb.Capabilities().Memory; how != "cgroup v1" {
		t.Skipf("the threads join limit groups only under cgroup v1 (memory here: %q)", how)
	}
	for range 20 {
		if _, err := e.run(t, "echo hi\n"); err != nil {
			t.Fatal(err)
		}
		if in := threadsInLimitGroups(t); len(in) > 0 {
			t.Fatalf("host threads still in a limit group after the call: %v", in)
		}
	}
}

// threadsInLimitGroups lists this process's threads that are in a
// sandbox limit group, with the group.
func threadsInLimitGroups(t *testing.T) []string {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		groups, err := os.ReadFile("/proc/self/task/" + task.Name() + "/cgroup")
		if err != nil {
			continue // the thread ended
		}
		for _, line := range strings.Split(string(groups), "\n") {
			if strings.Contains(line, "vcpnode-sb-") {
				out = append(out, task.Name()+" "+line)
			}
		}
	}
	return out
}

// restrictedThreads lists this process's threads with no_new_privs, but
// the main thread (the runtime parks it, unused, when a locked goroutine
// ends on it).
func restrictedThreads(t *testing.T) []string {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		status, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err == nil && strings.Contains(string(status), "NoNewPrivs:\t1") && task.Name() != fmt.Sprint(os.Getpid()) {
			out = append(out, task.Name())
		}
	}
	return out
}

// TestSandboxStaticRefusalNamesPathAndFix: a static plugin failing on a
// refused read is an error naming the refused path and the config that
// grants it, as a call's would be.
func TestSandboxStaticRefusalNamesPathAndFix(t *testing.T) {
	e := newSandboxEnv(t, "default", nil)
	dir := filepath.Join(e.root, "Probe")
	writeFile(t, dir, manifestFile, `{"name":"Probe","pluginType":"static","entryPoint":{"command":"sh probe.sh"},"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{Probe}}"}]}}`)
	writeFile(t, dir, "probe.sh", fmt.Sprintf("cat %q\n", e.secret))
	set := scan(t, e.host, e.root)
	if len(set.Static) != 1 {
		t.Fatalf("static plugins: %d", len(set.Static))
	}
	_, err := set.Static[0].Run(context.Background())
	if err == nil {
		t.Fatal("reading the home directory succeeded")
	}
	for _, want := range []string{`plugin "Probe" was refused by the node's sandbox (profile "default"): read ` + e.secret,
		"[sandbox.profiles.probe]\nextends = \"default\"\nread = [\"~/.ssh\"]\n\n[tools.Probe]\nsandbox = \"probe\"\n"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "SECRET-KEY-MATERIAL") {
		t.Error("the secret leaked")
	}
}
