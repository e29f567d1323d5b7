package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func put(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// granted is the grant covering path (the closest one).
func granted(gs []Grant, path string) (Grant, bool) {
	var best Grant
	for _, g := range gs {
		if within(canonical(path), canonical(g.Path)) && len(g.Path) > len(best.Path) {
			best = g
		}
	}
	return best, best.Path != ""
}

// TestDeriveVCPToolBoxLayout: a Node.js plugin kept as VCPToolBox keeps
// it reads the tree's shared node_modules and modules/, its script and its
// package, read-only; nothing else of the tree.
func TestDeriveVCPToolBoxLayout(t *testing.T) {
	root := t.TempDir()
	put(t, filepath.Join(root, "node_modules/dayjs/index.js"), "")
	put(t, filepath.Join(root, "modules/logger.js"), "")
	put(t, filepath.Join(root, "config.env"), "SECRET=1")
	dir := filepath.Join(root, "Plugin/Weather")
	put(t, filepath.Join(dir, "weather.js"), "")
	o := &Options{Home: t.TempDir()}
	gs := o.derived(Command{Kind: "plugin", Path: "/usr/bin/node", Args: []string{"node", "weather.js"}, Dir: dir})
	for path, from := range map[string]string{
		filepath.Join(root, "node_modules/dayjs/index.js"): FromNodeModules,
		filepath.Join(root, "modules/logger.js"):           FromTreeModules,
		filepath.Join(dir, "weather.js"):                   FromScript,
	} {
		g, ok := granted(gs, path)
		if !ok || g.Write || g.From != from {
			t.Errorf("%s: granted %v as %+v, want read-only from %q", path, ok, g, from)
		}
	}
	if g, ok := granted(gs, filepath.Join(root, "config.env")); ok {
		t.Errorf("the tree's config.env is granted: %+v", g)
	}
}

// TestDeriveNotThePluginTree: VCPToolBox's root holds package.json and
// pyproject.toml, the package root of every plugin script below it; the
// root's config.env (the tree's keys) and another plugin's config.env stay
// out for a Node.js, a Python and a shell plugin; a script outside the
// tree still gets its package.
func TestDeriveNotThePluginTree(t *testing.T) {
	root := t.TempDir()
	put(t, filepath.Join(root, "package.json"), "{}")
	put(t, filepath.Join(root, "pyproject.toml"), "")
	put(t, filepath.Join(root, "node_modules/dayjs/index.js"), "")
	secrets := []string{put(t, filepath.Join(root, "config.env"), "VCP_Key=x"), put(t, filepath.Join(root, "Plugin/Other/config.env"), "API_KEY=x")}
	dir := filepath.Join(root, "Plugin/Tarot")
	put(t, filepath.Join(dir, "tarot.js"), "")
	put(t, filepath.Join(dir, "tarot.py"), "")
	put(t, filepath.Join(dir, "lib/run.sh"), "")
	app := t.TempDir()
	put(t, filepath.Join(app, "package.json"), "{}")
	appScript := put(t, filepath.Join(app, "dist/index.js"), "")
	o := &Options{Home: t.TempDir()}
	for _, argv := range [][]string{{"node", "tarot.js"}, {"python3", "tarot.py"}, {"sh", "lib/run.sh"}, {"node", appScript}} {
		gs := o.derived(Command{Kind: "plugin", Tool: "Tarot", Path: "/usr/bin/" + argv[0], Args: argv, Dir: dir})
		for _, s := range secrets {
			if g, ok := granted(gs, s); ok {
				t.Errorf("%v: %s granted by %+v", argv, s, g)
			}
		}
		if argv[0] == "node" {
			if _, ok := granted(gs, filepath.Join(root, "node_modules/dayjs/index.js")); !ok {
				t.Errorf("%v: the tree's node_modules is not granted: %+v", argv, gs)
			}
		}
		if argv[1] == appScript {
			if _, ok := granted(gs, filepath.Join(app, "package.json")); !ok {
				t.Errorf("%v: the script's own package is not granted: %+v", argv, gs)
			}
		}
	}
}

// TestDeriveScriptAndPackageRoot: the script an interpreter names, and
// its package root; a script in the home itself gets only itself.
func TestDeriveScriptAndPackageRoot(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	put(t, filepath.Join(proj, "package.json"), "{}")
	script := put(t, filepath.Join(proj, "dist/index.js"), "")
	loose := put(t, filepath.Join(home, "x.py"), "")
	o := &Options{Home: home}
	for _, c := range []struct {
		name string
		cmd  Command
		want []string
		not  []string
	}{
		{"node dist/index.js", Command{Path: "/usr/bin/node", Args: []string{"node", "--enable-source-maps", "dist/index.js"}, Dir: proj},
			[]string{script, filepath.Join(proj, "package.json")}, nil},
		{"deno run", Command{Path: "/usr/bin/deno", Args: []string{"deno", "run", "-A", script}},
			[]string{filepath.Join(proj, "package.json")}, nil},
		{"python in home", Command{Path: "/usr/bin/python3", Args: []string{"python3", loose}, Env: []string{"HOME=" + home}},
			[]string{loose}, []string{filepath.Join(home, "proj")}},
		{"sh -c", Command{Path: "/bin/sh", Args: []string{"/bin/sh", "-c", "node " + script}, Env: []string{"PATH=" + filepath.Dir(nodePath(t))}},
			[]string{script, filepath.Join(proj, "package.json")}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			gs := o.derived(c.cmd)
			for _, p := range c.want {
				if g, ok := granted(gs, p); !ok || g.Write {
					t.Errorf("%s not granted read-only: %+v", p, gs)
				}
			}
			for _, p := range c.not {
				if g, ok := granted(gs, p); ok {
					t.Errorf("%s granted: %+v", p, g)
				}
			}
		})
	}
}

func nodePath(t *testing.T) string {
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the sh -c case runs node")
	}
	return p
}

// TestDerivePython: a venv's python reads its venv and the interpreter's
// own library, asked of the interpreter.
func TestDerivePython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	venv := filepath.Join(t.TempDir(), "venv")
	if out, err := exec.Command(py, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Skipf("python3 -m venv fails here: %v: %s", err, out)
	}
	out, err := exec.Command(py, "-c", "import os; print(os.__file__)").Output()
	if err != nil {
		t.Fatal(err)
	}
	stdlib := strings.TrimSpace(string(out))
	gs := (&Options{Home: t.TempDir()}).derived(Command{Path: filepath.Join(venv, "bin/python"), Args: []string{"python", "-u", "server.py"}})
	for path, from := range map[string]string{filepath.Join(venv, "pyvenv.cfg"): FromVenv, stdlib: FromPython} {
		if g, ok := granted(gs, path); !ok || g.Write || (g.From != from && g.From != FromPython) {
			t.Errorf("%s: %v %+v", path, ok, g)
		}
	}
}

// TestDerivePackageRunners: npx gets npm's cache, writable (made when
// missing), and the global prefix it names, read-only.
func TestDerivePackageRunners(t *testing.T) {
	home, prefix := t.TempDir(), t.TempDir()
	o := &Options{Home: home}
	gs := o.derived(Command{Path: "/usr/bin/npx", Args: []string{"npx", "-y", "@modelcontextprotocol/server-everything"},
		Env: []string{"HOME=" + home, "npm_config_prefix=" + prefix}})
	if g, ok := granted(gs, filepath.Join(home, ".npm/_npx")); !ok || !g.Write || g.From != FromCache {
		t.Errorf("npm cache: %v %+v (%+v)", ok, g, gs)
	}
	if g, ok := granted(gs, prefix); !ok || g.Write {
		t.Errorf("global prefix: %v %+v", ok, g)
	}
	gs = o.derived(Command{Path: "/usr/bin/uvx", Args: []string{"uvx", "mcp-server-time"}, Env: []string{"HOME=" + home}})
	for _, p := range []string{".cache/uv", ".local/share/uv"} {
		if g, ok := granted(gs, filepath.Join(home, p)); !ok || !g.Write {
			t.Errorf("uv %s: %v %+v", p, ok, g)
		}
	}
}

// TestDerivedNeverCoversProtected: for every derivation rule, a command
// set up so the rule would reach the node's config, key, state, audit log
// or ~/.ssh (a package root holding them, a symbolic link into them, a
// variable naming them) is granted none of them.
func TestDerivedNeverCoversProtected(t *testing.T) {
	o, rules, secrets := protectedRig(t)
	for name, c := range rules {
		t.Run(name, func(t *testing.T) {
			gs := o.derived(c)
			if len(gs) == 0 {
				t.Fatalf("nothing derived: the case does not exercise its rule")
			}
			for _, p := range append(slices.Clone(secrets), o.Home) {
				if g, ok := granted(gs, p); ok {
					t.Errorf("%s is covered by %+v", p, g)
				}
			}
		})
	}
}

// protectedRig is a command per derivation rule, each set up so the rule
// would reach the node's own files or ~/.ssh, the options that protect
// them, and those files (each holding "SECRET" and its name).
func protectedRig(t *testing.T) (*Options, map[string]Command, []string) {
	home, etc := t.TempDir(), t.TempDir()
	secret := func(path string) string { return put(t, path, "SECRET "+path+"\n") }
	ssh := secret(filepath.Join(home, ".ssh/id_ed25519"))
	own := []string{
		secret(filepath.Join(etc, "vcpnode/config.toml")), secret(filepath.Join(etc, "vcpnode/key")),
		secret(filepath.Join(etc, "state/state.json")), secret(filepath.Join(etc, "audit.log")),
	}
	protected := []string{own[0], own[1], filepath.Dir(own[2]), own[3]}
	// A project whose package root is the tree holding the node's files.
	put(t, filepath.Join(etc, "package.json"), "{}")
	put(t, filepath.Join(etc, "pyproject.toml"), "")
	script := put(t, filepath.Join(etc, "src/main.js"), "")
	pyScript := put(t, filepath.Join(etc, "src/main.py"), "")
	// A plugin folder whose node_modules and modules lead into secrets.
	tree := t.TempDir()
	dir := filepath.Join(tree, "Plugin/Evil")
	put(t, filepath.Join(dir, "index.js"), "")
	for link, target := range map[string]string{
		filepath.Join(dir, "node_modules"):  filepath.Join(home, ".ssh"),
		filepath.Join(tree, "node_modules"): etc,
		filepath.Join(tree, "modules"):      filepath.Join(etc, "vcpnode"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	// A venv inside the tree holding the node's files.
	venv := filepath.Join(etc, "venv")
	put(t, filepath.Join(venv, "pyvenv.cfg"), "home = /usr/bin\n")
	venvPy := put(t, filepath.Join(venv, "bin/python3"), "#!/bin/sh\n")
	env := []string{"HOME=" + home}
	o := &Options{Home: home, Protected: protected}
	rules := map[string]Command{
		"script and package root":  {Path: "/usr/bin/node", Args: []string{"node", script}, Env: env},
		"python script":            {Path: "/usr/bin/python3", Args: []string{"python3", pyScript}, Env: env},
		"node_modules and modules": {Kind: "plugin", Path: "/usr/bin/node", Args: []string{"node", "index.js"}, Dir: dir, Env: env},
		"NODE_PATH":                {Path: "/usr/bin/node", Args: []string{"node", "-e", "1"}, Env: append(env, "NODE_PATH="+etc+":"+home+":"+filepath.Join(home, ".ssh"))},
		"PYTHONPATH":               {Path: "/usr/bin/python3", Args: []string{"python3", "-c", "1"}, Env: append(env, "PYTHONPATH="+etc+":"+home)},
		"venv":                     {Path: venvPy, Args: []string{"python3", "-c", "1"}, Env: env},
		"npm cache":                {Path: "/usr/bin/npx", Args: []string{"npx", "-y", "x"}, Env: append(env, "npm_config_cache="+filepath.Join(home, ".ssh"), "npm_config_prefix="+etc)},
		"npm cache home":           {Path: "/usr/bin/npx", Args: []string{"npx", "-y", "x"}, Env: append(env, "npm_config_cache="+home, "npm_config_prefix="+etc)},
		"uv cache":                 {Path: "/usr/bin/uvx", Args: []string{"uvx", "x"}, Env: append(env, "UV_CACHE_DIR="+etc, "UV_TOOL_DIR="+filepath.Join(home, ".ssh"))},
		"declared in the manifest": {Kind: "plugin", Path: "/bin/sh", Args: []string{"sh", "x.sh"}, Dir: declaring(t, home, etc), Env: env},
		"shebang":                  {Path: put(t, filepath.Join(etc, "bin/tool"), "#!/usr/bin/env node\n"), Args: []string{"tool"}, Env: append(env, "PATH=/usr/bin:/bin")},
	}
	return o, rules, append(own, ssh)
}

// declaring is a plugin folder whose manifest declares the folders given,
// and their parents, readable and writable.
func declaring(t *testing.T, dirs ...string) string {
	dir := filepath.Join(t.TempDir(), "Plugin", "Declares")
	var list []string
	for _, d := range dirs {
		list = append(list, strconv.Quote(d), strconv.Quote(filepath.Dir(d)))
	}
	put(t, filepath.Join(dir, "plugin-manifest.json"), `{"name":"Declares","sandbox":{"read":[`+strings.Join(list, ",")+
		`,"~/.ssh","../Other"],"write":[`+strings.Join(list, ",")+`,"~"]}}`)
	put(t, filepath.Join(dir, "../Other/x"), "")
	return dir
}

// TestDeriveNeverTheTempFolder: a script in the folder of the calls'
// temporary directories, beside a package.json anyone can write there,
// gets itself, not the folder (other calls' private directories).
func TestDeriveNeverTheTempFolder(t *testing.T) {
	temp := t.TempDir()
	other := put(t, filepath.Join(temp, "vcpnode-call-1/secret.txt"), "")
	put(t, filepath.Join(temp, "package.json"), "{}")
	script := put(t, filepath.Join(temp, "x.js"), "")
	gs := (&Options{Home: t.TempDir(), TempDir: temp}).derived(Command{Path: "/usr/bin/node", Args: []string{"node", script}})
	if _, ok := granted(gs, script); !ok {
		t.Errorf("the script is not granted: %+v", gs)
	}
	if g, ok := granted(gs, other); ok {
		t.Errorf("another call's temporary directory is covered by %+v", g)
	}
}

// TestDeriveDeclared: a plugin's manifest declares folders it uses,
// relative to its folder, absolute or from ~/.
func TestDeriveDeclared(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	put(t, filepath.Join(home, "notes/a.md"), "")
	dir := filepath.Join(t.TempDir(), "Plugin", "Notes")
	put(t, filepath.Join(dir, "plugin-manifest.json"), `{"name":"Notes","sandbox":{"read":["../Shared",`+strconv.Quote(data)+`],"write":["~/notes"]}}`)
	put(t, filepath.Join(dir, "../Shared/lib.js"), "")
	gs := (&Options{Home: home}).derived(Command{Kind: "plugin", Path: "/bin/sh", Args: []string{"sh", "x.sh"}, Dir: dir, Env: []string{"HOME=" + home}})
	for path, write := range map[string]bool{filepath.Join(dir, "../Shared/lib.js"): false, data: false, filepath.Join(home, "notes/a.md"): true} {
		if g, ok := granted(gs, path); !ok || g.Write != write || g.From != FromDeclared {
			t.Errorf("%s: %v %+v", path, ok, g)
		}
	}
}

// TestDeriveMCPArguments: an MCP server reads and writes the folders its
// configured arguments name, whatever runs it, and only those: not a
// file, not a relative path, not a system tree, not a folder right under
// the root, not the home or a secret in it, nor for a plugin.
func TestDeriveMCPArguments(t *testing.T) {
	home := t.TempDir()
	notes, data := filepath.Join(t.TempDir(), "notes"), filepath.Join(t.TempDir(), "data")
	for _, d := range []string{notes, data, filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	file := put(t, filepath.Join(t.TempDir(), "conf.json"), "{}")
	o := &Options{Home: home}
	args := []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", notes, "--data=" + data, file, "notes",
		"/usr/share", "/etc", "/tmp", "/", home, filepath.Join(home, ".ssh")}
	gs := o.derived(Command{Kind: "MCP server", Tool: "files", Path: "/usr/bin/npx", Args: args, Env: []string{"HOME=" + home}})
	for _, dir := range []string{notes, data} {
		if g, ok := granted(gs, dir); !ok || !g.Write || g.From != FromArgument {
			t.Errorf("%s: granted %v as %+v, want read and write from %q", dir, ok, g, FromArgument)
		}
	}
	for _, g := range gs {
		if g.From == FromArgument && g.Path != notes && g.Path != data {
			t.Errorf("granted %+v: only the two folders are the server's", g)
		}
	}
	gs = o.derived(Command{Kind: "plugin", Tool: "Files", Path: "/usr/bin/node", Args: []string{"node", "x.js", notes}, Env: []string{"HOME=" + home}})
	if g, ok := granted(gs, notes); ok {
		t.Errorf("a plugin's argument is granted: %+v", g)
	}
}
