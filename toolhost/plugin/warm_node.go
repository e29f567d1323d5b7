package plugin

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// nodeBootstrap is preloaded into a warm node process; it waits for the
// call and then lets Node load the script as a fresh start would (see the
// file).
//
//go:embed warm_node.js
var nodeBootstrap string

// nodeWarmEnv tells the bootstrap that it runs in the main thread of a
// warm start; the bootstrap removes it.
const nodeWarmEnv = "VCPNODE_WARM_NODE"

// nodeLaunch is spec's command, "node SCRIPT ARGS…" with script its
// absolute path, as a warm start: "node --require=BOOTSTRAP SCRIPT
// ARGS…", or the reason it runs cold. The preload returns before Node
// chooses how to load the main module, so CommonJS scripts and ES modules
// load as in a cold start.
func (h *Host) nodeLaunch(spec *runSpec, script string) (launch, string) {
	c := spec.launch
	for _, kv := range spec.env {
		if v, ok := strings.CutPrefix(kv, "NODE_OPTIONS="); ok && strings.TrimSpace(v) != "" {
			return launch{}, "NODE_OPTIONS is set: its preloads would run before the call"
		}
	}
	if why := nodeScript(script); why != "" {
		return launch{}, why
	}
	boot, err := h.nodeBootstrapFile()
	if err != nil {
		return launch{}, err.Error()
	}
	argv := append([]string{c.argv[0], "--require=" + boot}, c.argv[1:]...)
	return launch{
		path: c.path, argv: argv,
		// Ready is the first byte of stdout, read before the call: an fd of
		// its own would change the fd numbers Node and the script get (a
		// cold start gets every fd the daemon did not mark close-on-exec).
		env:  []string{nodeWarmEnv + "=1"},
		read: []string{boot}, readyOnStdout: true,
	}, ""
}

// nodeScript reports why path is not a script the warm path runs (not a
// regular .js, .cjs or .mjs file; a .js file under a package.json Node
// cannot read), or "".
func nodeScript(path string) string {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".cjs", ".mjs":
	case ".js":
		if t := packageType(filepath.Dir(path)); t == "" {
			return "its package.json cannot be read"
		}
	default:
		return "its script is not a .js, .cjs or .mjs file"
	}
	_, why := regularScript(path)
	return why
}

// packageType is the "type" of the nearest package.json of dir, as Node
// finds it (up to the root, never a node_modules folder's own): "module" or
// "commonjs" (also when none says), "" when it cannot be parsed.
func packageType(dir string) string {
	for filepath.Base(dir) != "node_modules" {
		data, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			var pkg struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(data, &pkg) != nil {
				return ""
			}
			if pkg.Type == "module" {
				return "module"
			}
			return "commonjs"
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "commonjs"
}

// nodeBootstrapFile is the bootstrap written to a private directory of the
// host's (a preload must be a file: Node resolves its real path), made on
// first use and removed by Close. Every plugin's sandbox is granted it.
func (h *Host) nodeBootstrapFile() (string, error) {
	h.bootOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vcpnode-warm-")
		if err != nil {
			h.bootErr = fmt.Errorf("write the node bootstrap: %w", err)
			return
		}
		path := filepath.Join(dir, "warm_node.js")
		if err := os.WriteFile(path, []byte(nodeBootstrap), 0o444); err != nil {
			_ = os.RemoveAll(dir)
			h.bootErr = fmt.Errorf("write the node bootstrap: %w", err)
			return
		}
		_ = os.Chmod(dir, 0o755) // a plugin of another user still reads it
		h.bootDir, h.boot = dir, path
	})
	if h.boot == "" && h.bootErr == nil {
		return "", ErrClosed // Close ran first: nothing starts any more
	}
	return h.boot, h.bootErr
}
