package plugin

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Languages a plugin can be kept warm in.
const (
	WarmPython = "python"
	WarmNode   = "node"
)

// WarmLanguages are the values [plugins] warm accepts.
var WarmLanguages = []string{WarmPython, WarmNode}

// pythonBootstrap waits in a started interpreter and then runs the
// plugin's script as a fresh "python SCRIPT ARGS" would (see the file).
//
//go:embed warm_python.py
var pythonBootstrap string

// Bytes of the warm handshake: the bootstrap writes warmReady on fd 3 once
// it waits (warmRefused: this interpreter cannot be warmed; warmPreloadFailed:
// a module of the plugin's preload cannot be imported, and stderr says why);
// the call's stdin starts with warmGo.
const (
	warmReady         = 'r'
	warmRefused       = 'n'
	warmPreloadFailed = 'p'
	warmGo            = 'g'
)

// MaxPreload bounds how many modules a warm Python plugin preloads.
const MaxPreload = 64

// preloadName is a module name preload accepts: ASCII identifiers joined
// by dots, which the bootstrap can carry as a plain string literal.
var preloadName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// PreloadProblem describes what is wrong with name as a module to preload,
// or returns "".
func PreloadProblem(name string) string {
	if !preloadName.MatchString(name) {
		return fmt.Sprintf("%q is not a Python module name (ASCII names joined by dots, like \"json\" or \"xml.etree.ElementTree\")", name)
	}
	return ""
}

// pythonProgramFor is the bootstrap with its preload filled in: names that
// passed PreloadProblem, as a tuple of string literals.
func pythonProgramFor(preload []string) (string, error) {
	if len(preload) > MaxPreload {
		return "", fmt.Errorf("preload lists %d modules, more than %d", len(preload), MaxPreload)
	}
	var tuple strings.Builder
	tuple.WriteString("(")
	for _, name := range preload {
		if why := PreloadProblem(name); why != "" {
			return "", errors.New(why)
		}
		tuple.WriteString(`"` + name + `", `)
	}
	tuple.WriteString(")")
	const slot = "    preload = ()\n"
	if strings.Count(pythonBootstrap, slot) != 1 {
		return "", errors.New("the bootstrap has no preload line") // a broken build; the tests catch it
	}
	return strings.Replace(pythonBootstrap, slot, "    preload = "+tuple.String()+"\n", 1), nil
}

var (
	pythonProgram = regexp.MustCompile(`^python(3(\.[0-9]+)?)?$`)
	nodeProgram   = regexp.MustCompile(`^node(js)?$`)
)

// language is the warm language of a program named program, or "".
func language(program string) string {
	switch base := filepath.Base(program); {
	case pythonProgram.MatchString(base):
		return WarmPython
	case nodeProgram.MatchString(base):
		return WarmNode
	}
	return ""
}

// warmLanguage is the language of spec's interpreter when its command
// runs python or node directly or under a shell, or "".
func warmLanguage(spec *runSpec) string {
	c := spec.launch
	if c.shell || c.cmdLine != "" {
		if words := strings.Fields(c.argv[len(c.argv)-1]); len(words) > 0 {
			return language(words[0])
		}
		return ""
	}
	if len(c.argv) == 0 {
		return ""
	}
	return language(c.argv[0])
}

// warmLaunch is how spec, whose language is lang, starts warm: the
// interpreter its command names, with the bootstrap (importing preload
// first, for Python) in front of the script and its arguments. A command the warm path cannot run exactly as a cold
// start would (a shell, a program run directly, interpreter options, a
// script that is compiled or an archive, an ES module) gives a reason
// instead.
func (h *Host) warmLaunch(spec *runSpec, lang string, preload []string) (l launch, reason string) {
	c := spec.launch
	switch {
	case c.shell || c.cmdLine != "":
		return launch{}, "its command runs under a shell"
	case lang == "":
		return launch{}, fmt.Sprintf("its command runs %s, not python or node on a script", filepath.Base(c.path))
	case len(c.argv) < 2 || strings.HasPrefix(c.argv[1], "-"):
		return launch{}, "its command passes no script, or options, to " + lang
	}
	script := c.argv[1]
	if !filepath.IsAbs(script) {
		script = filepath.Join(spec.dir, script)
	}
	if lang == WarmNode {
		return h.nodeLaunch(spec, script)
	}
	if why := plainSource(script); why != "" {
		return launch{}, why
	}
	program, err := pythonProgramFor(preload)
	if err != nil {
		return launch{}, "its preload: " + err.Error()
	}
	argv := append([]string{c.argv[0], "-c", program}, c.argv[1:]...)
	return launch{path: c.path, argv: argv}, ""
}

// plainSource reports why path is not a Python source file python would
// read as one (a directory or zip archive runs its __main__.py; a .pyc is
// compiled code), or "".
func plainSource(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pyc", ".pyz", ".zip":
		return "its script is compiled code or an archive"
	}
	fi, why := regularScript(path)
	if why != "" {
		return why
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("its script cannot be read: %v", err)
	}
	defer f.Close()
	// A zip archive is found from its end, where its directory is.
	var tail [22]byte
	if fi.Size() >= int64(len(tail)) {
		if _, err := f.ReadAt(tail[:], fi.Size()-int64(len(tail))); err == nil && string(tail[:4]) == "PK\x05\x06" {
			return "its script is a zip archive"
		}
	}
	return ""
}

// regularScript is path's file info, or why it is not a script either
// interpreter would run as a fresh start does.
func regularScript(path string) (os.FileInfo, string) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Sprintf("its script cannot be read: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, "its script is not a regular file"
	}
	return fi, ""
}
