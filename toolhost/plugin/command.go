package plugin

import (
	"path/filepath"
	"strings"
)

// launch is how a plugin's entryPoint.command is started: a program path
// and its argv (argv[0] as the command wrote it, as sh would pass it).
type launch struct {
	path  string
	argv  []string
	shell bool // argv is sh -c <command> (cmd.exe /d /s /c on Windows)
	// cmdLine, on Windows, is the command line as given (cmd.exe has its
	// own quoting, which Go's argument escaping would break); else "".
	cmdLine string

	// A warm launch's additions: env is appended to the plugin's
	// environment, read are files the sandbox lets it read, and
	// readyOnStdout says the interpreter reports ready with the first byte
	// of its stdout rather than on an fd 3 of its own.
	env           []string
	read          []string
	readyOnStdout bool
}

// planLaunch decides how to start command in dir with the child's PATH.
//
// A command with no shell syntax is split on spaces and its program is
// resolved now, so each run saves the fork and exec of sh. Anything else —
// quotes, variables, redirections, globs, a shell builtin, or a program not
// found — runs under /bin/sh -c, exactly as the official hosts do.
//
// A command whose program is "python" runs with "python3" when PATH has no
// python but has python3 (most manifests say python; many Linux systems
// only ship python3). The rewrite is reported in note.
func planLaunch(command, dir, pathList string) (l launch, note string) {
	if rest, ok := cutProgram(command, "python"); ok && lookPath("python", pathList) == "" && lookPath("python3", pathList) != "" {
		command = "python3" + rest
		note = `"python" is not on PATH; running the command with python3`
	}
	sh := shellLaunch(command)
	if needsShell(command) {
		return sh, note
	}
	words := strings.Fields(command)
	if len(words) == 0 || shellWords[words[0]] {
		return sh, note
	}
	var path string
	if strings.ContainsAny(words[0], pathSeparators) {
		path = words[0]
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		path = executable(path)
	} else {
		path = lookPath(words[0], pathList)
	}
	if path == "" {
		// Let sh report "not found" (exit 127) at run time, as the official hosts would.
		return sh, note
	}
	return launch{path: path, argv: words}, note
}

// cutProgram reports whether command's first word is program and returns
// what follows it.
func cutProgram(command, program string) (rest string, ok bool) {
	rest, ok = strings.CutPrefix(command, program)
	if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return "", false
	}
	return rest, true
}

// hasShellSyntax reports whether command contains anything sh would
// interpret: every byte outside a conservative literal set counts (quotes,
// $, `, |, &, ;, <, >, globs, parentheses, ~, \, #, =, tabs, newlines…).
// Non-ASCII bytes are literal to sh. Braces are literal too, except where
// bash (which is /bin/sh on some systems) would expand them: {a,b}, {1..3}.
func hasShellSyntax(command string) bool {
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch {
		case c >= 0x80,
			'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte(" -_./:,+@%^{}", c) >= 0:
		default:
			return true
		}
	}
	for _, w := range strings.Fields(command) {
		if strings.ContainsRune(w, '{') && (strings.ContainsRune(w, ',') || strings.Contains(w, "..")) {
			return true
		}
	}
	return false
}

// shellWords are keywords and builtins with no program of the same meaning
// on PATH; a command starting with one needs sh.
var shellWords = map[string]bool{
	"!": true, "{": true, "}": true, ".": true, ":": true, "alias": true, "break": true, "case": true, "cd": true,
	"command": true, "continue": true, "do": true, "done": true, "elif": true, "else": true,
	"esac": true, "eval": true, "exec": true, "exit": true, "export": true, "fi": true,
	"for": true, "getopts": true, "hash": true, "if": true, "local": true, "read": true,
	"readonly": true, "return": true, "set": true, "shift": true, "source": true,
	"then": true, "times": true, "trap": true, "type": true, "ulimit": true, "umask": true,
	"unset": true, "until": true, "wait": true, "while": true,
}

// lookPath finds an executable named name in pathList (the child's PATH),
// or returns "". Relative PATH entries are skipped: sh would search them
// from the plugin folder, so such commands are left to sh.
func lookPath(name, pathList string) string {
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			continue
		}
		if p := executable(filepath.Join(dir, name)); p != "" {
			return p
		}
	}
	return ""
}
