package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// python grants what the interpreter at interp imports from: its venv,
// PYTHONPATH and PYTHONHOME, and the sys.path the interpreter reports.
func (d *deriver) python(interp string) {
	if venv := venvRoot(interp); venv != "" {
		d.add(venv, false, FromVenv)
		// The venv's base interpreter (pyvenv.cfg's home) and its library.
		for _, p := range pythonPaths(venvBase(venv)) {
			d.add(p, false, FromPython)
		}
	}
	for _, k := range []string{"PYTHONPATH", "PYTHONHOME"} {
		for _, p := range filepath.SplitList(envValue(d.c.Env, k)) {
			d.add(p, false, FromPython)
		}
	}
	if real := canonical(interp); d.c.Dir == "" || !within(real, canonical(d.c.Dir)) {
		// An interpreter inside the tool's own folder is the tool's code:
		// it is never run unconfined to ask it anything.
		for _, p := range pythonPaths(interp) {
			d.add(p, false, FromPython)
		}
	}
}

// venvRoot is the virtual environment interp belongs to (the folder of
// its pyvenv.cfg, next to it or one up), else "".
func venvRoot(interp string) string {
	dir := filepath.Dir(interp)
	for _, r := range []string{dir, filepath.Dir(dir)} {
		if _, err := os.Stat(filepath.Join(r, "pyvenv.cfg")); err == nil {
			return r
		}
	}
	return ""
}

// venvBase is the interpreter a venv was made from ("home" in its
// pyvenv.cfg), else "".
func venvBase(venv string) string {
	b, err := os.ReadFile(filepath.Join(venv, "pyvenv.cfg"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if v = strings.TrimSpace(v); ok && strings.TrimSpace(k) == "home" && filepath.IsAbs(v) {
			for _, name := range []string{"python3", "python"} {
				if p := filepath.Join(v, name); executableFile(p) {
					return p
				}
			}
		}
	}
	return ""
}

// pythonQuery prints the interpreter's own search path: sys.path and the
// site-packages folders, without running site (no .pth file, no
// sitecustomize) and ignoring PYTHON* variables (-I -S): nothing of the
// tool's runs while the daemon asks.
const pythonQuery = `import sys, site, json
print(json.dumps(sys.path + site.getsitepackages() + [site.getusersitepackages(), sys.prefix, sys.exec_prefix]))`

// pythonCache keeps each interpreter's answer (keyed by its file and
// modification time): it is asked once.
var pythonCache sync.Map

// pythonPaths are the existing absolute folders of interp's search path;
// nil when it cannot tell.
func pythonPaths(interp string) []string {
	if interp == "" {
		return nil
	}
	real := canonical(interp)
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	key := real + "\x00" + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + "\x00" + strconv.FormatInt(fi.Size(), 10)
	if v, ok := pythonCache.Load(key); ok {
		return v.([]string)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, interp, "-I", "-S", "-c", pythonQuery)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"}
	out, err := cmd.Output()
	var paths []string
	if err != nil || json.Unmarshal(out, &paths) != nil {
		return nil // not a Python this can ask; nothing derived
	}
	var found []string
	for _, p := range paths {
		if filepath.IsAbs(p) {
			if _, err := os.Stat(p); err == nil {
				found = append(found, filepath.Clean(p))
			}
		}
	}
	pythonCache.Store(key, found)
	return found
}
