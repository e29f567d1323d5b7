//go:build !windows

package plugin

import "os"

// shellPath runs commands that need a shell, like Node's spawn({shell:true}).
const shellPath = "/bin/sh"

// pathSeparators mark a program given as a path rather than a name.
const pathSeparators = "/"

// shellLaunch runs command under sh -c.
func shellLaunch(command string) launch {
	return launch{path: shellPath, argv: []string{shellPath, "-c", command}, shell: true}
}

// needsShell: command has sh syntax.
func needsShell(command string) bool { return hasShellSyntax(command) }

// platformEnvKeys are base variables particular to the system (none here).
var platformEnvKeys []string

// envKey is the form variable names are compared in: as written.
func envKey(k string) string { return k }

// executable is path if it is an executable regular file, else "".
func executable(path string) string {
	fi, err := os.Stat(path)
	if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return path
	}
	return ""
}
