package main

import (
	"bytes"
	"crypto/rand"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

//go:embed assets
var assets embed.FS

// benchKey is a throwaway key for the loopback server; it is no secret.
const benchKey = "benchofficial-key_0123456789"

// The plugins both nodes host, from one folder. BenchPyWarm, BenchPyPreload
// and BenchJsWarm are BenchPy and BenchJs under other names: vcpnode keeps
// interpreters waiting for them (warm = true; BenchPyPreload's import json
// done before the call, preload = ["json"]); the official node has no such
// mode and runs them like the originals.
var benchTools = []string{"BenchSh", "BenchPy", "BenchPyWarm", "BenchPyPreload", "BenchJs", "BenchJsWarm"}

// clones are the plugins made by copying another under a new name.
var clones = [][2]string{{"BenchPy", "BenchPyWarm"}, {"BenchPy", "BenchPyPreload"}, {"BenchJs", "BenchJsWarm"}}

const (
	smallFile = 1 << 10
	largeFile = 10 << 20
)

// workdir is the measurement's directory: one plugin folder and one file
// folder for both nodes, the official node's runnable copy, vcpnode's config.
type workdir struct {
	root, plugins, files string
	official             string // a copy of the checkout's two scripts, with our config.env and Plugin
	vcpnodeConfig        string
	hubJS                string
}

func (w workdir) file(size int) string {
	return filepath.Join(w.files, fmt.Sprintf("bench-%d.bin", size))
}

func prepare(root string, o options) (workdir, error) {
	w := workdir{
		root:          root,
		plugins:       filepath.Join(root, "Plugin"),
		files:         filepath.Join(root, "files"),
		official:      filepath.Join(root, "official"),
		vcpnodeConfig: filepath.Join(root, "vcpnode", "vcpnode.toml"),
		hubJS:         filepath.Join(root, "hub", "hub.js"),
	}
	if err := copyAssets(root); err != nil {
		return w, err
	}
	if err := os.Rename(filepath.Join(root, "assets", "plugins"), w.plugins); err != nil {
		return w, err
	}
	for _, c := range clones {
		if err := clonePlugin(w.plugins, c[0], c[1]); err != nil {
			return w, err
		}
	}
	for _, d := range []string{w.files, w.official, filepath.Dir(w.vcpnodeConfig), filepath.Dir(w.hubJS)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return w, err
		}
	}
	if err := os.Rename(filepath.Join(root, "assets", "hub.js"), w.hubJS); err != nil {
		return w, err
	}
	for _, size := range []int{smallFile, largeFile} {
		data := make([]byte, size)
		_, _ = rand.Read(data)
		if err := os.WriteFile(w.file(size), data, 0o600); err != nil {
			return w, err
		}
	}
	if err := prepareOfficial(w, o); err != nil {
		return w, err
	}
	return w, writeVcpnodeConfig(w, o)
}

func copyAssets(root string) error {
	return fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(root, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

// clonePlugin copies plugin folder from to a folder named to, renaming it in
// its manifest.
func clonePlugin(plugins, from, to string) error {
	src, dst := filepath.Join(plugins, from), filepath.Join(plugins, to)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if e.Name() == "plugin-manifest.json" {
			data = bytes.Replace(data, []byte(`"name": "`+from+`"`), []byte(`"name": "`+to+`"`), 1)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// prepareOfficial makes a runnable copy of the official node that hosts the
// benchmark's Plugin folder: Plugin.js reads the folder beside itself, so the
// checkout's two scripts are copied (unchanged) next to a link to it, and
// node_modules links to the checkout's.
func prepareOfficial(w workdir, o options) error {
	for _, name := range []string{"VCPDistributedServer.js", "Plugin.js", "package.json"} {
		data, err := os.ReadFile(filepath.Join(o.official, name))
		if err != nil {
			return fmt.Errorf("the official node's checkout: %w", err)
		}
		if err := os.WriteFile(filepath.Join(w.official, name), data, 0o644); err != nil {
			return err
		}
	}
	modules := filepath.Join(o.official, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "ws")); err != nil {
		return fmt.Errorf("%s has no node_modules/ws: run npm install there first", o.official)
	}
	if err := os.Symlink(modules, filepath.Join(w.official, "node_modules")); err != nil {
		return err
	}
	if err := os.Symlink(w.plugins, filepath.Join(w.official, "Plugin")); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(w.root, "assets", "official.js"), filepath.Join(w.official, "official.js")); err != nil {
		return err
	}
	// The keys VCPDistributedServer.js reads (its config.env.example). Port 0:
	// its HTTP server on any free port. DebugMode off: no line per call.
	env := fmt.Sprintf("Main_Server_URL=\"ws://127.0.0.1:%s\"\nVCP_Key=%q\nDebugMode=\"False\"\nServerName=\"official-bench\"\nDIST_SERVER_PORT=0\n",
		hubPortPlaceholder, benchKey)
	return os.WriteFile(filepath.Join(w.official, "config.env"), []byte(env), 0o600)
}

// hubPortPlaceholder stands for the server's port in both nodes' configs
// until the server is listening.
const hubPortPlaceholder = "HUBPORT"

// warmTools are the plugins vcpnode keeps interpreters waiting for, with
// what their config section adds to warm = true.
var warmTools = []struct {
	tool  string
	extra []string
}{
	{"BenchPyWarm", nil},
	{"BenchPyPreload", []string{`preload = ["json"]`}},
	{"BenchJsWarm", nil},
}

// calledInRun reports whether a scenario -only lets run calls tool.
func calledInRun(w workdir, o options, tool string) bool {
	for _, s := range scenarios(w) {
		if s.req.Tool == tool && s.selected(o) {
			return true
		}
	}
	return false
}

// writeVcpnodeConfig writes vcpnode's config: the shipped defaults except
// what the comparison needs (the same plugins and files, the warm plugin,
// room for 64 calls at once like the official node, which has no limit) and
// what keeps it off the system's paths.
func writeVcpnodeConfig(w workdir, o options) error {
	dir := filepath.Dir(w.vcpnodeConfig)
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(benchKey+"\n"), 0o600); err != nil {
		return err
	}
	lines := []string{
		"[hub]",
		fmt.Sprintf("url = \"ws://127.0.0.1:%s\"", hubPortPlaceholder),
		fmt.Sprintf("key_file = %q", keyFile),
		`name = "vcpnode-bench"`,
		"",
		"[node]",
		"max_concurrent = 64",
		"queue = 256",
		"",
		"[files]",
		fmt.Sprintf("roots = [%q]", w.files),
		"",
		"[log]",
		`format = "json"`,
		"",
		"[plugins]",
		fmt.Sprintf("dirs = [%q]", w.plugins),
		fmt.Sprintf("state_dir = %q", filepath.Join(dir, "state")),
		"",
		"[control]",
		fmt.Sprintf("socket = %q", filepath.Join(dir, "vcpnode.sock")),
		"",
	}
	// Only the warm rows that run get interpreters waiting: with -only, the
	// tree's memory is then the node's alone.
	for _, wt := range warmTools {
		if calledInRun(w, o, wt.tool) {
			lines = append(lines, "[tools."+wt.tool+"]", "warm = true")
			lines = append(lines, wt.extra...)
			lines = append(lines, "")
		}
	}
	if o.sandbox != "" {
		lines = append(lines, "[sandbox]", fmt.Sprintf("profile = %q", o.sandbox), "")
	}
	return os.WriteFile(w.vcpnodeConfig, []byte(strings.Join(lines, "\n")), 0o600)
}

// setHubPort replaces the port placeholder in a config file.
func setHubPort(path string, port int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	data = bytes.ReplaceAll(data, []byte(hubPortPlaceholder), []byte(fmt.Sprint(port)))
	return os.WriteFile(path, data, 0o600)
}
