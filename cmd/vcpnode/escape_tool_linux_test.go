package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testnet"
	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
	"github.com/vcpnode/vcpnode/wsproto"
)

// escapeRoutes are the ways a tool's process tries to leave its tree: each
// ends in a process that sleeps on, orphaned, after calling every endpoint
// of the control socket.
var escapeRoutes = []string{"setsid", "doublefork", "emptyenv", "unshare", "clone3"}

// escapeScript is a plugin that starts one escapee per route from its
// confined leader, waits until each has reported, then answers ("end"),
// hangs ("hang"), or answers first and stays ("async").
func escapeScript(self, sock string) string {
	need := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			return "/nonexistent/" + name
		}
		return p
	}
	// The escapee: its own pid (from /proc: its call's PID namespace's),
	// the control attack, then sleep under that pid.
	body := fmt.Sprintf(`read -r pid rest < /proc/self/stat; %s=%s %s > "$1.ctl" 2>&1; echo $pid > "$1.pid"; exec %s 1000`,
		attackControlEnv, sock, self, need("sleep"))
	return fmt.Sprintf(`mode=$1
[ "$mode" = async ] && echo '{"status":"success","result":"accepted"}'
b='%[1]s'
%[2]s /bin/sh -c "$b" sh setsid </dev/null >/dev/null 2>&1 &
( /bin/sh -c "$b" sh doublefork </dev/null >/dev/null 2>&1 & )
( %[3]s -i %[2]s /bin/sh -c "$b" sh emptyenv </dev/null >/dev/null 2>&1 & )
( %[4]s --user --pid --fork /bin/sh -c "$b" sh unshare </dev/null >/dev/null 2>unshare.err || echo refused > unshare.refused ) &
( %[5]s=1 %[6]s /bin/sh -c "$b" sh clone3 </dev/null >clone3.out 2>&1 & )
for r in setsid doublefork emptyenv unshare clone3; do
  n=0
  until [ -s "$r.pid" ] || [ -e "$r.refused" ] || grep -qs '^refused\|^unguarded' "$r.out"; do
    n=$((n+1)); [ $n -gt 1200 ] && break
    %[7]s 0.05
  done
done
case $mode in
end) echo '{"status":"success","result":"every escapee reported"}' ;;
hang) exec %[7]s 1000 ;;
async) exec %[7]s 1000 ;;
esac
`, body, need("setsid"), need("env"), need("unshare"), attackClone3Env, self, need("sleep"))
}

// escapee is what one route left: a pid, or the kernel's refusal.
type escapee struct {
	route, refused string
	pid            int
	control        string
}

// escapees reads what each route left in dir.
func escapees(t *testing.T, dir string) []escapee {
	t.Helper()
	var out []escapee
	for _, r := range escapeRoutes {
		e := escapee{route: r}
		read := func(name string) string {
			b, _ := os.ReadFile(filepath.Join(dir, r+name))
			return strings.TrimSpace(string(b))
		}
		if s := read(".out"); strings.HasPrefix(s, "refused") || strings.HasPrefix(s, "unguarded") {
			e.refused = s
		} else if s := read(".refused"); s != "" {
			e.refused = s + ": " + read(".err")
		} else if pid, err := strconv.Atoi(read(".pid")); err == nil {
			// The pid of the call's PID namespace, as this process sees it
			// (it works in dir); 0: it runs no more.
			e.pid, e.control = proctreetest.HostPid(pid, dir), read(".ctl")
		} else {
			t.Fatalf("route %s left neither a pid nor a refusal (out %q, err %q)", r, read(".out"), read(".err"))
		}
		out = append(out, e)
	}
	return out
}

// TestEscapedProcessesEndWithTheirCall runs the real daemon as root with
// plugins whose confined processes leave their tree by every route (setsid,
// double fork, an empty environment, new user and pid namespaces, clone3
// into the root cgroup): each escapee is refused on every control
// endpoint, and none outlives its call's end, its timeout,
// async_max_runtime or the daemon's shutdown.
func TestEscapedProcessesEndWithTheirCall(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the daemon tracks trees with a cgroup of its own only as root here (no delegated cgroup); as another user it walks /proc, which docs/sandbox.md says an orphan with an empty environment can evade")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	hub, err := demohub.Start(demohub.Options{Key: ctlTestKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	self, sock := selfPath(t), testnet.SocketPath(t)
	root := t.TempDir()
	script := escapeScript(self, sock)
	plugins := map[string]string{"EscEnd": "synchronous end", "EscTimeout": "synchronous hang", "EscAsync": "asynchronous async", "EscShutdown": "asynchronous async"}
	for name, how := range plugins {
		typ, mode, _ := strings.Cut(how, " ")
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		manifest := fmt.Sprintf(`{"name":%q,"pluginType":%q,"entryPoint":{"command":"sh escape.sh %s"},"communication":{"protocol":"stdio","timeout":120000}}`, name, typ, mode)
		for file, body := range map[string]string{"plugin-manifest.json": manifest, "escape.sh": script} {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var profiles strings.Builder
	for name := range plugins {
		fmt.Fprintf(&profiles, "[tools.%s]\nsandbox = \"esc\"\n", name)
		if name == "EscTimeout" {
			profiles.WriteString("timeout = \"8s\"\n")
		}
	}
	cfg := writeFile(t, "config.toml", fmt.Sprintf(`[hub]
url = %q
key = %q

[node]
exposed_tools = ["EscEnd", "EscTimeout", "EscAsync", "EscShutdown"]

[plugins]
dirs = [%q]
state_dir = %q
async_max_runtime = "10s"

[log]
format = "json"

%s
# default, and this binary, which the escapees run
[sandbox.profiles.esc]
extends = "default"
read = [%q]
`, hub.BaseURL(), ctlTestKey, root, t.TempDir(), profiles.String(), filepath.Dir(self)), 0o600)

	var all []int
	t.Cleanup(func() { // after the daemon's own cleanup
		for _, pid := range all { // whatever the test did not see end
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	d := startToolDaemon(t, ctx, hub, cfg, sock)
	call := d.call
	// check asserts what the escapees of one plugin did, and returns the
	// pids that are still to end.
	check := func(t *testing.T, name string) []int {
		t.Helper()
		var pids []int
		for _, e := range escapees(t, filepath.Join(root, name)) {
			if e.refused != "" {
				if strings.HasPrefix(e.refused, "unguarded") {
					t.Logf("SKIP route %s: %s; it is tested once the launcher's syscall filter denies clone3", e.route, e.refused)
				} else {
					t.Logf("route %s: the kernel refused the escape: %s", e.route, e.refused)
				}
				continue
			}
			if e.pid != 0 {
				all = append(all, e.pid)
				pids = append(pids, e.pid)
			}
			if n := strings.Count(e.control, "refused "); n != len(controlEndpoints) {
				t.Errorf("route %s (pid %d): %d of %d control endpoints refused:\n%s", e.route, e.pid, n, len(controlEndpoints), e.control)
			}
		}
		return pids
	}
	gone := func(t *testing.T, what string, pids []int) {
		t.Helper()
		for _, pid := range pids {
			testwait.For(t, fmt.Sprintf("escapee %d to end with %s", pid, what), func() bool { return proctreetest.Gone(pid) })
		}
	}
	wait := func(ch <-chan wsproto.ToolResult) wsproto.ToolResult { t.Helper(); return d.wait(t, ch) }

	timedOut, async := call("EscTimeout"), call("EscAsync")
	t.Run("call end", func(t *testing.T) {
		res := wait(call("EscEnd"))
		if res.Status != wsproto.StatusSuccess {
			t.Fatalf("EscEnd: %s %s", res.Status, res.Error)
		}
		gone(t, "the call", check(t, "EscEnd"))
	})
	t.Run("timeout", func(t *testing.T) {
		res := wait(timedOut)
		if res.Status == wsproto.StatusSuccess {
			t.Fatalf("EscTimeout answered: %s", res.Result)
		}
		gone(t, "the call's timeout", check(t, "EscTimeout"))
	})
	t.Run("async_max_runtime", func(t *testing.T) {
		if res := wait(async); res.Status != wsproto.StatusSuccess {
			t.Fatalf("EscAsync: %s %s", res.Status, res.Error)
		}
		gone(t, "async_max_runtime", check(t, "EscAsync"))
	})
	t.Run("shutdown", func(t *testing.T) {
		if res := wait(call("EscShutdown")); res.Status != wsproto.StatusSuccess {
			t.Fatalf("EscShutdown: %s %s", res.Status, res.Error)
		}
		dir := filepath.Join(root, "EscShutdown")
		testwait.For(t, "the escapees to report", func() bool {
			for _, r := range escapeRoutes {
				if _, err := os.Stat(filepath.Join(dir, r+".pid")); err != nil {
					if _, err := os.Stat(filepath.Join(dir, r+".refused")); err != nil && !strings.Contains(readString(filepath.Join(dir, r+".out")), "ed") {
						return false
					}
				}
			}
			return true
		})
		pids := check(t, "EscShutdown")
		if err := d.stop(); err != nil {
			t.Errorf("vcpnode run: %v", err)
		}
		gone(t, "the daemon's shutdown", pids)
	})
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestToolProcessRefusedAsAUser: a daemon run by an ordinary user refuses
// its tools' processes on the control socket too.
func TestToolProcessRefusedAsAUser(t *testing.T) {
	testuser.Rerun(t, "^TestApproveFromAToolIsRefused$")
}
