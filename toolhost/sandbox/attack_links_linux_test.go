package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
)

// TestAttackLinksInOwnFolder: what a command needs is found from the
// command itself — its script and the script's package root, every
// node_modules from the tool's folder up — and the tool writes its own
// folder. A symbolic link it leaves there (node_modules, or its script,
// leading to a tree outside its profile; here a project folder of the
// test's, on a machine the rest of the home or another service's data)
// must not be granted as what it points to: the next call reads nothing
// there, its own code preloaded (NODE_OPTIONS) or not. A node_modules
// that is a folder of the tool's own still serves. Without that rule the
// attack lands.
func TestAttackLinksInOwnFolder(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node here: the attacks run Node.js's module resolution")
	}
	e := newConfinedEnv(t, nil)
	victim := t.TempDir()
	for name, body := range map[string]string{"secret.txt": "SECRET\n", "package.json": "{}\n", "index.js": "\n"} {
		if err := os.WriteFile(filepath.Join(victim, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The tool's own code, preloaded; it reads the victim's file.
	evil := filepath.Join(e.dir, "evil.js")
	if err := os.WriteFile(evil, []byte(`try { console.log("read: " + require("fs").readFileSync(`+
		`"`+filepath.Join(victim, "secret.txt")+`", "utf8").trim()) } catch (e) { console.log("read: " + e.code) }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := func(name string) string {
		p := filepath.Join(e.dir, name)
		os.Remove(p)
		target := victim
		if strings.HasSuffix(name, ".js") {
			target = filepath.Join(victim, "index.js")
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := append(os.Environ(), "NODE_OPTIONS=--require "+evil)
	for _, c := range []struct {
		name string
		argv func() []string
	}{
		{"node_modules", func() []string { link("node_modules"); return []string{node, "-e", "0"} }},
		{"script", func() []string { return []string{node, link("main.js")} }},
	} {
		argv := c.argv()
		for _, profile := range []string{Default, Offline} {
			// The linked script itself is refused too: the exit may fail.
			out, stderr, code, _ := e.runEnv(t, profile, env, argv...)
			if !strings.Contains(out, "read: ") {
				t.Fatalf("%s, %s: exit %d %q %s", c.name, profile, code, out, stderr)
			}
			if !strings.Contains(out, "read: EACCES") {
				t.Errorf("%s, %s: a link in the tool's folder granted what it points to: %q", c.name, profile, out)
			}
		}
		os.Remove(filepath.Join(e.dir, "node_modules"))
	}
	// A node_modules of the tool's own, a folder, still resolves.
	if err := os.MkdirAll(filepath.Join(e.dir, "node_modules", "own"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "node_modules", "own", "index.js"), []byte("module.exports = 'own'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := e.run(t, Default, node, "-p", "require('own')"); code != 0 || out != "own\n" {
		t.Errorf("its own node_modules: exit %d %q %s", code, out, stderr)
	}
}

// TestAttackLinksInOwnFolderAsUser is TestAttackLinksInOwnFolder for a
// daemon run by an ordinary user.
func TestAttackLinksInOwnFolderAsUser(t *testing.T) {
	t.Parallel()
	testuser.Rerun(t, "^TestAttackLinksInOwnFolder$")
}
