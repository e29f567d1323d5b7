package sandbox

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
)

// explained runs argv under profile as a tool would and returns its
// stdout and the error Explain makes of its exit with its stderr.
func (e *confinedEnv) explained(t *testing.T, profile string, argv ...string) (string, error) {
	t.Helper()
	return e.explainedEnv(t, profile, os.Environ(), argv...)
}

// explainedEnv is explained with env for the command's environment.
func (e *confinedEnv) explainedEnv(t *testing.T, profile string, env []string, argv ...string) (string, error) {
	t.Helper()
	out, _, _, err := e.runEnv(t, profile, env, argv...)
	return out, err
}

// redisClient connects to a Unix socket and reports a failure as the
// redis client for Python does: the path and the errno's words, with a
// traceback whose source line names the path again.
const redisClient = `
import socket, sys
path = sys.argv[1]
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(b"PING\n")
    print(s.recv(16).decode().strip())
except OSError as e:
    sys.stderr.write("redis.exceptions.ConnectionError: Error %d connecting to unix socket: %s. %s.\n" % (e.errno, path, e.strerror))
    sys.exit(1)
`

// TestExplainHiddenRun: a service's socket and a file under a tree the
// call's mount namespace hides (/run; here a tree of the test's) answer
// ENOENT inside the call. The explanation names each — the socket as a
// Unix socket, hidden — and the configuration that grants it; with that
// configuration the same client reaches the service. A path that is
// missing for the daemon too is the program's own error.
func TestExplainHiddenRun(t *testing.T) {
	t.Parallel()
	py := python(t)
	run := filepath.Join(t.TempDir(), "run")
	sock := filepath.Join(run, "redis", "redis.sock")
	token := put(t, filepath.Join(run, "secrets", "token"), "s3cret")
	if err := os.MkdirAll(filepath.Dir(sock), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if line, _ := bufio.NewReader(c).ReadString('\n'); line == "PING\n" {
					_, _ = c.Write([]byte("PONG\n"))
				}
			}()
		}
	}()
	client := put(t, filepath.Join(t.TempDir(), "client.py"), redisClient)
	env := func(specs map[string]Spec) *confinedEnv {
		e := newConfinedEnv(t, specs)
		o := *e.sb.opts.Load()
		o.hide = []string{run}
		e.sb.opts.Store(&o)
		return e
	}
	e := env(map[string]Spec{"client": {Extends: Default, Read: []string{filepath.Dir(client)}}})
	e.needNamespaces(t)

	_, err = e.explained(t, "client", py, client, sock)
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("the hidden socket: got %v, want a refusal naming it", err)
	}
	want := "connect to the Unix socket " + sock + " (hidden: a call sees " + run + " empty"
	if len(re.Refusals) != 1 || !strings.HasPrefix(re.Refusals[0].String(), want) {
		t.Errorf("refusals %v, want only %q", re.Refusals, want)
	}
	if !strings.Contains(re.Fix, "[sandbox.profiles.client]   # added to this profile's lists\nwrite = [\""+sock+"\"]") {
		t.Errorf("the fix does not grant the socket:\n%s", err)
	}
	_, err = e.explained(t, "client", "cat", token)
	if !errors.As(err, &re) || len(re.Refusals) != 1 || !strings.HasPrefix(re.Refusals[0].String(), "read "+token+" (hidden") ||
		!strings.Contains(re.Fix, `read = ["`+filepath.Dir(token)+`"]`) {
		t.Errorf("the hidden file: got %v, want a refusal granting its folder", err)
	}
	// Docker's client names the socket as a URL, ending a sentence.
	docker := errors.New("Cannot connect to the Docker daemon at unix://" + sock + ". Is the docker daemon running?")
	r := &Run{Profile: Default, tool: "Docker", kind: "plugin", pol: &policy{Hide: []string{run}}}
	if err := r.Explain(docker); !errors.As(err, &re) || len(re.Refusals) != 1 || re.Refusals[0].Path != sock || !re.Refusals[0].Socket {
		t.Errorf("docker's client: got %v, want the socket %s", err, sock)
	}
	gone := filepath.Join(run, "redis", "gone.sock")
	if _, err := e.explained(t, "client", py, client, gone); err == nil || errors.As(err, &re) {
		t.Errorf("a socket missing for the daemon too: got %v, want the client's own error", err)
	}

	// The configuration the explanation printed, applied.
	spec := Spec{Extends: Default, Read: []string{filepath.Dir(client)}}
	AddRefusals(&spec, []Refusal{{Path: sock, Socket: true, Hidden: run}, {Path: token, Hidden: run}}, "")
	granted := env(map[string]Spec{"client": spec})
	if out, err := granted.explained(t, "client", py, client, sock); err != nil || strings.TrimSpace(out) != "PONG" {
		t.Errorf("with the socket granted: %q, %v; want PONG", out, err)
	}
	if out, err := granted.explained(t, "client", "cat", token); err != nil || out != "s3cret" {
		t.Errorf("with the folder granted: %q, %v", out, err)
	}
}

// TestExplainOwnSandbox: a command that makes a sandbox of its own from
// namespaces (bubblewrap, as VCPToolBox's shell runner is configured to
// use; unshare) is refused them by the syscall filter; the explanation
// says so and how to do without, and offers no grant (none gives
// namespaces). Unconfined, the same command makes them.
func TestExplainOwnSandbox(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	if !e.sb.caps.Seccomp {
		t.Skip("no seccomp filters here: namespaces are not refused")
	}
	argvs := [][]string{{"unshare", "-r", "-m", "true"}}
	if _, err := exec.LookPath("bwrap"); err == nil {
		argvs = append(argvs, []string{"bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"})
	} else {
		t.Log("bwrap is not installed: unshare only")
	}
	for _, argv := range argvs {
		if _, err := exec.LookPath(argv[0]); err != nil {
			t.Logf("%s is not installed", argv[0])
			continue
		}
		if _, _, code := e.run(t, None, argv...); code != 0 {
			t.Logf("%v fails unconfined too (exit %d): this kernel gives no user namespaces", argv, code)
			continue
		}
		_, err := e.explained(t, Default, argv...)
		var re *RefusedError
		if !errors.As(err, &re) || len(re.Refusals) != 1 || !strings.HasPrefix(re.Refusals[0].What, "a sandbox of the tool's own") {
			t.Errorf("%v: got %v, want its own sandbox named", argv, err)
			continue
		}
		if re.Fix != "" || !strings.Contains(err.Error(), "SANDBOX_BACKEND=none") || !strings.Contains(err.Error(), `under [tools.probe] sandbox = "none"`) {
			t.Errorf("%v: want no grant and the way without:\n%v", argv, err)
		}
	}
}

// TestExplainSocketList: ss, which lists sockets through a netlink family
// the syscall filter refuses, warns and falls back to /proc/net; when the
// command then fails, the explanation names the refusal as one no grant
// changes. Unconfined, ss gives no such warning.
func TestExplainSocketList(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ss"); err != nil {
		t.Skip("ss (iproute2) is not installed")
	}
	e := newConfinedEnv(t, nil)
	if !e.sb.caps.Seccomp {
		t.Skip("no seccomp filters here: netlink is not refused")
	}
	if _, stderr, _ := e.run(t, None, "ss", "-tln"); strings.Contains(stderr, "netlink") {
		t.Fatalf("unconfined ss warns too: %s", stderr)
	}
	out, stderr, code := e.run(t, Default, "ss", "-tln")
	if code != 0 || !strings.Contains(out, "Local Address") {
		t.Fatalf("confined ss exited %d without its list: %q %q", code, out, stderr)
	}
	if !strings.Contains(stderr, "Cannot open netlink socket: Operation not permitted") {
		t.Skipf("this ss does not warn as iproute2's does: %q", stderr)
	}
	_, err := e.explained(t, Default, "sh", "-c", "ss -tln >/dev/null; exit 3")
	var re *RefusedError
	if !errors.As(err, &re) || len(re.Refusals) != 1 || !strings.HasPrefix(re.Refusals[0].What, "a netlink socket") {
		t.Fatalf("got %v, want the netlink refusal named", err)
	}
	if re.Fix != "" || !strings.Contains(err.Error(), "falls back to /proc/net") {
		t.Errorf("want no grant and the fallback said:\n%v", err)
	}
}

// TestGitUnderDefault: git, which tools run from their scripts, stops
// ("unknown error occurred while reading the configuration files") when
// the user's ~/.gitconfig is there but refused; under default it reads it
// and ~/.config/git, and works in the tool's folder, the credentials file
// kept out.
func TestGitUnderDefault(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	e := newConfinedEnv(t, nil)
	home := e.sb.opts.Load().Home
	put(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = Nova\n\temail = nova@example.com\n[credential]\n\thelper = store\n")
	put(t, filepath.Join(home, ".config/git/ignore"), "*.log\n")
	creds := put(t, filepath.Join(home, ".git-credentials"), "https://nova:token@example.com\n")
	if out, err := exec.Command(git, "init", "-q", e.dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	put(t, filepath.Join(e.dir, "a.txt"), "a")
	put(t, filepath.Join(e.dir, "x.log"), "log")
	script := `export HOME=` + home + `
git add -A && git commit -qm one && git log --format=%an && git status --porcelain --ignored | tr '\n' ' '
cat ` + creds + ` 2>&1 | sed 's/.*: //'`
	out, stderr, code := e.sh(t, Default, script)
	if want := "Nova\n!! x.log Permission denied\n"; code != 0 || out != want {
		t.Errorf("git under default: exit %d, %q; want %q\n%s", code, out, want, stderr)
	}
}

// TestBashFromNodeQuiet: bash -c whose stdin is a socket (Node.js's
// child_process pipes are socket pairs) reads ~/.bashrc when it takes
// itself for the top shell, as under sshd; the home's ~/.bashrc is not
// granted (it often holds tokens), so every command a shell-running
// plugin starts said "Permission denied" on stderr. Confined commands get
// SHLVL, as under a login session, and bash reads no ~/.bashrc.
func TestBashFromNodeQuiet(t *testing.T) {
	t.Parallel()
	py := python(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	e := newConfinedEnv(t, nil)
	home := e.sb.opts.Load().Home
	put(t, filepath.Join(home, ".bashrc"), "export API_TOKEN=secret\necho from-bashrc\n")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHLVL=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home)
	script := `import socket, subprocess, sys
a, b = socket.socketpair()
r = subprocess.run(["` + bash + `", "-c", "echo ok; echo token=$API_TOKEN"], stdin=a, capture_output=True, text=True)
print(repr(r.stdout), repr(r.stderr))`
	want := "'ok\\ntoken=\\n' ''\n"
	if out, err := e.explainedEnv(t, Default, env, py, "-c", script); err != nil || out != want {
		t.Errorf("bash under default: %q, %v; want %q", out, err, want)
	}
}

// TestRefusalsRealAsOrdinaryUser runs the tests of this file again in a
// copy of the test binary started as nobody.
func TestRefusalsRealAsOrdinaryUser(t *testing.T) {
	t.Parallel()
	testuser.Rerun(t, "^(TestExplainHiddenRun|TestExplainOwnSandbox|TestGitUnderDefault|TestBashFromNodeQuiet)$")
}
