package sandbox

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// refusalMarks are how programs report EACCES and EPERM, and EROFS: in
// the call's mount namespace what it may not write is mounted read-only.
var refusalMarks = []string{"Permission denied", "permission denied", "Operation not permitted",
	"operation not permitted", "EACCES", "EPERM", "PermissionError", "Read-only file system",
	"read-only file system", "EROFS"}

// missingMarks are how programs report ENOENT. What a call does not see
// under a hidden tree answers ENOENT, and a client often names the path
// on another line than the error (Python's traceback shows the connect
// line, the error none), so an output with one of these anywhere has
// every hidden path it names checked.
var missingMarks = []string{"No such file or directory", "no such file or directory", "ENOENT",
	"FileNotFoundError", "Is the docker daemon running"}

var (
	// absPath finds absolute paths in a line of output, and relative
	// ones from ./ or ../; quotedPath the ones in quotes (GNU tools quote
	// ‘so’), which may hold spaces.
	absPath    = regexp.MustCompile(`(?:^|[\s'"` + "`" + `‘“(\[=,:])((?:\.\.?)?/[^\s'"` + "`" + `’”,:)\]]*)`)
	quotedPath = regexp.MustCompile(`['"‘“]((?:\.\.?)?/[^'"’”\n]*)['"’”]`)
	// connectPort finds the port of a refused TCP connect (Node.js, Go, Python).
	connectPort = regexp.MustCompile(`(?:connect (?:EACCES|EPERM) \S*:|dial tcp \S*:)(\d+)`)
	// missingModule: Node.js could not resolve a module (require or import).
	missingModule = regexp.MustCompile(`Cannot find (?:module|package) '([^']+)'(?: imported from (/\S+))?`)
	// requireStack is a file of Node.js's require stack.
	requireStack = regexp.MustCompile(`^\s*-\s+(/\S+)$`)
	// pyModule: Python could not import a module.
	pyModule = regexp.MustCompile(`No module named '([^'.]+)`)
)

// refusals finds what the run's profile refused, from its outputs: the
// paths its EACCES and EPERM lines name, the modules Node.js or Python
// could not find that exist outside the grants, the ports a connect was
// refused. Each is checked against the run's grants: a path the profile
// grants was refused by something else (the file's own permissions).
func (r *Run) refusals(outputs [][]byte) []Refusal {
	if r.pol == nil {
		return nil
	}
	var out, without []Refusal
	add := func(f Refusal) {
		if !slices.ContainsFunc(out, func(g Refusal) bool { return g.Path == f.Path && g.Port == f.Port && g.Write == f.Write }) {
			out = append(out, f)
		}
	}
	for _, o := range outputs {
		lines := splitLines(o)
		if len(r.pol.Hide) > 0 && slices.ContainsFunc(missingMarks, func(m string) bool { return bytes.Contains(o, []byte(m)) }) {
			for _, line := range lines {
				for _, path := range pathsIn(line, r.dir) {
					if f, ok := r.hiddenPath(path, clip(line)); ok {
						add(f)
					}
				}
			}
		}
		for i, line := range lines {
			if f, ok := withoutGrantIn(line); ok {
				if !slices.ContainsFunc(without, func(g Refusal) bool { return g.What == f.What }) {
					without = append(without, f)
				}
				continue
			}
			if m := missingModule.FindStringSubmatch(line); m != nil {
				from := m[2]
				for _, l := range lines[i+1:] {
					if s := requireStack.FindStringSubmatch(l); s != nil && from == "" {
						from = s[1]
					}
				}
				for _, p := range r.moduleCandidates(m[1], from, nodeCandidates) {
					if f, ok := r.checkPath(p, clip(line)); ok {
						add(f)
						break
					}
				}
				continue
			}
			if m := pyModule.FindStringSubmatch(line); m != nil {
				for _, p := range r.moduleCandidates(m[1], "", pyCandidates) {
					if f, ok := r.checkPath(p, clip(line)); ok {
						add(f)
						break
					}
				}
				continue
			}
			// Node.js's recursive mkdir refused with EROFS reports the
			// ENOENT of the folder it was to end with; checkPath then looks
			// for the first folder missing.
			if !slices.ContainsFunc(refusalMarks, func(m string) bool { return strings.Contains(line, m) }) &&
				!(strings.Contains(line, "mkdir") && slices.ContainsFunc(missingMarks, func(m string) bool { return strings.Contains(line, m) })) {
				continue
			}
			if m := connectPort.FindStringSubmatch(line); m != nil {
				if port, _ := strconv.Atoi(m[1]); r.portRefused(port) {
					add(Refusal{Port: port, Line: clip(line), netOff: r.pol.NetDeny})
					continue
				}
			}
			// A write refused where reading is granted is weak evidence
			// when the line names another path the profile refused (a
			// shell names its script first: "x.sh: line 3: /p: …").
			var strong, weak []Refusal
			for _, path := range pathsIn(line, r.dir) {
				if f, ok := r.checkPath(path, clip(line)); ok && f.Write && !f.create {
					weak = append(weak, f)
				} else if ok {
					strong = append(strong, f)
				}
			}
			if len(strong) == 0 {
				strong = weak
			}
			for _, f := range strong {
				add(f)
			}
		}
	}
	if len(without) > 0 {
		// What no grant fixes ended the run: it is what to tell. The
		// other refusals come up again once the program gets past it,
		// if they matter (Chromium's crash reporter, refused its folder in
		// the home, carries on without it).
		return without
	}
	return out
}

// pathsIn are the paths line names: quoted ones whole, spaces and all,
// then the others; absolute, or relative from "./" or "../", which are
// taken from dir (the command's folder, where it starts; "": left out).
func pathsIn(line, dir string) []string {
	var out []string
	add := func(p string) {
		if !filepath.IsAbs(p) {
			if dir == "" {
				return
			}
			p = filepath.Join(dir, p)
		}
		out = append(out, p)
	}
	for _, m := range quotedPath.FindAllStringSubmatch(line, -1) {
		add(m[1])
	}
	rest := quotedPath.ReplaceAllString(line, " ")
	for _, m := range absPath.FindAllStringSubmatch(rest, -1) {
		add(m[1])
	}
	return out
}

// portRefused reports whether the run's profile refuses connecting to port.
func (r *Run) portRefused(port int) bool {
	if r.pol.NetDeny {
		return true
	}
	return len(r.pol.Ports) > 0 && !slices.Contains(r.pol.Ports, uint16(port))
}

// checkPath tells whether the run's profile refused path: one of the
// node's own files; a path no grant covers; a path granted read-only that
// the daemon's user could write (the write was refused); a file to make
// in a folder not granted writable that the daemon's user could write in.
// A path that does not exist in an existing folder was not refused (the
// program got ENOENT), nor a path covered that its own permissions keep
// from the daemon's user.
func (r *Run) checkPath(path, line string) (Refusal, bool) {
	path = filepath.Clean(path)
	if path == "/" || strings.HasPrefix(path, "/proc/") || strings.HasPrefix(path, "/dev/") {
		return Refusal{}, false
	}
	real := canonical(path)
	create := false
	if _, err := os.Lstat(real); err != nil {
		// Landlock leaves lookups alone: a path that does not exist was
		// refused only as a file to make in an existing folder.
		dir := filepath.Dir(path)
		if strings.Contains(line, "mkdir") {
			// A recursive mkdir names the folder it was to end with
			// (Node.js); it was refused the first one missing.
			for ; dir != filepath.Dir(dir); path, dir = dir, filepath.Dir(dir) {
				if _, err := os.Lstat(canonical(dir)); err == nil {
					break
				}
			}
		}
		parent := canonical(dir)
		if _, err := os.Stat(parent); err != nil {
			return Refusal{}, false
		}
		real, create = filepath.Join(parent, filepath.Base(path)), true
	}
	for _, p := range r.protected {
		if p != "" && within(real, canonical(p)) {
			return Refusal{Path: path, Own: true, Line: line}, true
		}
	}
	var cover *Grant
	for i, g := range r.pol.Grants {
		if within(real, canonical(g.Path)) && (cover == nil || g.Write) {
			cover = &r.pol.Grants[i]
		}
	}
	writable := func(p string) bool { return unix.Access(p, unix.W_OK) == nil }
	switch {
	case create && (cover == nil || !cover.Write) && writable(filepath.Dir(real)):
		f := Refusal{Path: path, Write: true, Line: line, create: true}
		if strings.Contains(line, "mkdir") {
			// The folder itself, not the one holding it (a plugin tree's
			// root, whose other plugins' code other tools run).
			f.folder = true
			f.Hint = "make the folder first (mkdir -p " + path + "): a grant takes a path that exists"
		}
		return f, true
	case create:
		return Refusal{}, false
	case cover == nil:
		return Refusal{Path: path, Line: line}, true
	case !cover.Write && writable(real):
		return Refusal{Path: path, Write: true, Line: line}, true
	}
	return Refusal{}, false
}

// hiddenPath tells whether path, named by an output that reports a
// missing file, is one the daemon sees in a tree the call's mount
// namespace covers (/run) and no grant mounts back: the call was refused
// it, though the program was told it does not exist.
func (r *Run) hiddenPath(path, line string) (Refusal, bool) {
	// "unix:///run/docker.sock." — a URL's slashes, a sentence's stop.
	path = filepath.Clean(strings.TrimRight(path, "."))
	real := canonical(path)
	var tree string
	for _, t := range r.pol.Hide {
		if within(real, canonical(t)) {
			tree = t
		}
	}
	fi, err := os.Lstat(real)
	if tree == "" || err != nil {
		return Refusal{}, false
	}
	for _, p := range r.protected {
		if p != "" && within(real, canonical(p)) {
			return Refusal{Path: path, Own: true, Line: line}, true
		}
	}
	if r.pol.shows(canonical(tree), real) {
		return Refusal{}, false // mounted back, or never covered
	}
	return Refusal{Path: path, Socket: fi.Mode()&os.ModeSocket != 0, Hidden: tree, Line: line}, true
}

// Candidate paths of a missing module, from a folder.
type candidates func(dir, module string) []string

func nodeCandidates(dir, module string) []string {
	if strings.HasPrefix(module, ".") || strings.HasPrefix(module, "/") {
		p := module
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, module)
		}
		return []string{p, p + ".js", p + ".cjs", p + ".mjs", p + ".json", filepath.Join(p, "index.js")}
	}
	name := module
	if parts := strings.SplitN(module, "/", 3); strings.HasPrefix(module, "@") && len(parts) >= 2 {
		name = parts[0] + "/" + parts[1]
	} else {
		name = parts[0]
	}
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		if filepath.Base(d) != "node_modules" {
			out = append(out, filepath.Join(d, "node_modules", name))
		}
		if d == filepath.Dir(d) {
			return out
		}
	}
}

func pyCandidates(dir, module string) []string {
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		out = append(out, filepath.Join(d, module), filepath.Join(d, module+".py"))
		if d == filepath.Dir(d) {
			return out
		}
	}
}

// moduleCandidates are where module could be, from the file that asked
// for it, else from the tool's folder; only existing ones.
func (r *Run) moduleCandidates(module, from string, cands candidates) []string {
	var dirs []string
	if from != "" {
		dirs = append(dirs, filepath.Dir(strings.TrimPrefix(from, "file://")))
	}
	if r.dir != "" {
		dirs = append(dirs, r.dir)
	}
	var out []string
	for _, d := range dirs {
		for _, p := range cands(d, module) {
			if _, err := os.Stat(p); err == nil && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func splitLines(out []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	return lines
}
