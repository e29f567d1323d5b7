package plugin

import (
	"os"
	"path/filepath"
	"strings"
)

// pathSeparators mark a program given as a path rather than a name.
const pathSeparators = `/\`

// shellLaunch runs command under cmd.exe, as Node's spawn({shell:true})
// does on Windows: /d skips AutoRun, /s /c runs the rest of the line as is.
// The command line is passed verbatim (launch.cmdLine): cmd.exe does not
// understand the backslash escapes Go would add to quotes.
func shellLaunch(command string) launch {
	comspec := os.Getenv("ComSpec")
	if comspec == "" {
		comspec = filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	}
	return launch{
		path:    comspec,
		argv:    []string{comspec, "/d", "/s", "/c", command},
		shell:   true,
		cmdLine: `"` + comspec + `" /d /s /c "` + command + `"`,
	}
}

// needsShell: command has cmd.exe's variables or escapes, or what sh would
// read as syntax (quotes, redirections…), backslashes aside: they are path
// separators here.
func needsShell(command string) bool {
	return strings.ContainsAny(command, "%^") || hasShellSyntax(strings.ReplaceAll(command, `\`, "/"))
}

// platformEnvKeys are the variables Windows programs expect to find
// (Python needs SYSTEMROOT to start, Node APPDATA, cmd.exe COMSPEC…).
var platformEnvKeys = []string{"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP",
	"USERPROFILE", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE"}

// envKey is the form variable names are compared in: Windows ignores case.
func envKey(k string) string { return strings.ToUpper(k) }

// executable is path if it names a program CreateProcess runs itself,
// trying the extensions of PATHEXT when it has none (as cmd.exe does), else
// "". Batch files (.bat, .cmd) are left to cmd.exe, whose quoting rules they
// follow.
func executable(path string) string {
	var exts []string
	for _, e := range strings.Split(strings.ToLower(os.Getenv("PATHEXT")), ";") {
		if e != ".bat" && e != ".cmd" {
			exts = append(exts, e)
		}
	}
	if len(exts) == 1 && exts[0] == "" {
		exts = []string{".com", ".exe"}
	}
	ext := strings.ToLower(filepath.Ext(path))
	for _, e := range exts {
		if e != "" && ext == e && isRegular(path) {
			return path
		}
	}
	for _, e := range exts {
		if e != "" && isRegular(path+e) {
			return path + e
		}
	}
	return ""
}

func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
