package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCommandFindsTheConfig: each command that reads the config finds
// it the same way: $VCPNODE_CONFIG, else the user's file, else, for root,
// the system one. The config names a control socket and an MCP token file
// that do not exist, so each command's error shows which file it read.
func TestEveryCommandFindsTheConfig(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "from-the-config.sock")
	token := filepath.Join(t.TempDir(), "from-the-config.token")
	doc := "[hub]\nurl = \"ws://127.0.0.1:1\"\nkey = \"search-key\"\n" +
		"[control]\nsocket = \"" + sock + "\"\n" +
		"[mcp.serve]\nlisten = \"127.0.0.1:0\"\ntoken_file = \"" + token + "\"\n" +
		"[placeholders.values]\nFoundConfig = \"yes\"\n"
	commands := []struct {
		args []string
		code int
		want string // in stdout or stderr
	}{
		{[]string{"config", "check"}, exitOK, "config OK"},
		{[]string{"config", "show"}, exitOK, "# "}, // followed by the path (checked below)
		{[]string{"status"}, exitError, sock},
		{[]string{"tools"}, exitError, sock},
		{[]string{"reload"}, exitError, sock},
		{[]string{"console", "--no-open"}, exitError, sock},
		{[]string{"watch", "--node-only"}, exitError, sock},
		{[]string{"mcp"}, exitError, sock},
		{[]string{"mcp", "--http"}, exitError, token},
		{[]string{"placeholders"}, exitError, sock},
		{[]string{"placeholders", "--local"}, exitOK, "FoundConfig"},
	}
	places := []struct {
		name string
		euid int
		put  func(t *testing.T, ta *testApp) string // writes the config, returns its path
	}{
		{"VCPNODE_CONFIG", 1000, func(t *testing.T, ta *testApp) string {
			p := writeAt(t, filepath.Join(t.TempDir(), "elsewhere.toml"), doc)
			ta.env[envConfig] = p
			return p
		}},
		{"user", 1000, func(t *testing.T, ta *testApp) string {
			return writeAt(t, filepath.Join(ta.env["HOME"], ".config", "vcpnode", "config.toml"), doc)
		}},
		{"system as root", 0, func(t *testing.T, ta *testApp) string {
			return writeAt(t, ta.systemConfig, doc)
		}},
	}
	for _, pl := range places {
		for _, c := range commands {
			t.Run(pl.name+"/"+strings.Join(c.args, " "), func(t *testing.T) {
				ta := newTestApp(t)
				ta.env["HOME"] = t.TempDir()
				ta.env["XDG_RUNTIME_DIR"] = t.TempDir()
				ta.systemConfig = filepath.Join(t.TempDir(), "etc", "vcpnode", "config.toml")
				ta.euid = func() int { return pl.euid }
				path := pl.put(t, ta)
				code := ta.run(c.args...)
				out := ta.stdout.String() + ta.stderr.String()
				if code != c.code || !strings.Contains(out, c.want) {
					t.Fatalf("exit %d (want %d), output lacks %q:\n%s", code, c.code, c.want, out)
				}
				if c.args[len(c.args)-1] == "show" && !strings.HasPrefix(out, "# "+path+" ") {
					t.Errorf("config show read another file:\n%.200s", out)
				}
			})
		}
		t.Run(pl.name+"/run", func(t *testing.T) {
			ta := newTestApp(t)
			ta.env["HOME"] = t.TempDir()
			ta.systemConfig = filepath.Join(t.TempDir(), "etc", "vcpnode", "config.toml")
			ta.euid = func() int { return pl.euid }
			path := pl.put(t, ta)
			exit := startRun(ta, "--socket", filepath.Join(t.TempDir(), "run.sock"))
			waitClosed(t, ta.node.running, "the node to run from the found config")
			ta.sigs <- os.Interrupt
			if code := waitExit(t, exit); code != exitOK || !strings.Contains(ta.stderr.String(), path) {
				t.Errorf("run: exit %d, its log does not name %s:\n%s", code, path, ta.stderr)
			}
		})
	}
}

// TestServiceFindsTheConfigAsRunDoes: `service install` uses the file run
// would use, from the same three places (the service's host file system is
// rooted in a temporary directory).
func TestServiceFindsTheConfigAsRunDoes(t *testing.T) {
	cases := []struct {
		name, scope string
		euid        int
		env, path   string // path is on the host, under the test's root
		from        string
	}{
		{"VCPNODE_CONFIG", "--user", 1000, "/srv/node.toml", "/srv/node.toml", "from $" + envConfig},
		{"user", "--user", 1000, "", "/home/alice/.config/vcpnode/config.toml", "found where vcpnode run and config check look"},
		{"system as root", "--system", 0, "", "/etc/vcpnode/config.toml", "found where vcpnode run and config check look"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := newServiceTest(t, "linux", c.euid)
			if c.env != "" {
				st.env[envConfig] = c.env
			} else {
				st.writeFile(t, c.path, "[hub]\nkey = \"k\"\n", 0o600)
			}
			out := st.mustRun(t, "service", "install", c.scope, "--dry-run")
			if want := "config " + c.path + " (" + c.from + ")\n"; !strings.Contains(out, want) {
				t.Errorf("service install does not use %s:\n%.300s", c.path, out)
			}
		})
	}
}
