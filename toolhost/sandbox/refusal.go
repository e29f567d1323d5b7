package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Refusal is one thing a run's profile kept from it: a path (read, or
// write where reading was granted) or a TCP port.
type Refusal struct {
	Path  string `json:"path,omitempty"`
	Write bool   `json:"write,omitempty"`
	Port  int    `json:"port,omitempty"`
	// Own: one of the node's own files, which no profile grants.
	Own bool `json:"own,omitempty"`
	// What and Hint: something no grant gives (Chromium's own sandbox),
	// and the program's own way to do without it.
	What string `json:"what,omitempty"`
	Hint string `json:"hint,omitempty"`
	// Socket: a Unix socket to connect to, granted by its path (written,
	// which Landlock ABI 9 asks of a socket's path).
	Socket bool `json:"socket,omitempty"`
	// Hidden: the tree the path is under, which the call sees empty but
	// for its grants (/run): the program was told the path does not exist.
	Hidden string `json:"hidden,omitempty"`
	// Line is the line of the run's output that told.
	Line string `json:"line"`
	// netOff: the profile refuses every TCP connect, not only this port.
	netOff bool
	// create: the write refused was making the file; folder: making
	// this folder, which is what to grant.
	create, folder bool
}

func (f Refusal) String() string {
	var s string
	switch {
	case f.What != "":
		return f.What
	case f.Port > 0:
		return fmt.Sprintf("TCP connect to port %d", f.Port)
	case f.Socket:
		s = "connect to the Unix socket " + f.Path
	case f.Write:
		s = "write " + f.Path
	default:
		s = "read " + f.Path
	}
	if f.Hidden != "" {
		s += " (hidden: a call sees " + f.Hidden + " empty but for what its profile grants there)"
	}
	return s
}

// RefusedError is the error of a run its profile refused something; it
// names what, and the configuration that would grant it.
type RefusedError struct {
	Kind, Tool, Profile string
	Refusals            []Refusal
	// Fix is the configuration that grants the refusals ("" when only the
	// node's own files were refused).
	Fix string
	Err error
}

func (e *RefusedError) Error() string {
	var what []string
	for _, f := range e.Refusals {
		s := f.String()
		if f.Own {
			s += ", one of the node's own files, which no profile grants"
		}
		what = append(what, s)
	}
	msg := fmt.Sprintf("%s %q was refused by the node's sandbox (profile %q): %s: ",
		e.Kind, e.Tool, e.Profile, strings.Join(what, ", "))
	if line := e.Refusals[0].Line; !strings.Contains(e.Err.Error(), line) {
		msg += line + ": "
	}
	msg += e.Err.Error()
	if e.Fix != "" {
		msg += "\nto grant it, add to the node's config and run `vcpnode reload`:\n" + e.Fix
	}
	for _, f := range e.Refusals {
		if f.Hint != "" {
			msg += "\n" + strings.ReplaceAll(f.Hint, noneForTool, noneFor(e.Kind, e.Tool))
		}
	}
	return msg
}

// noneForTool in a hint stands for the setting that runs the tool
// unconfined, written for its kind by noneFor.
const noneForTool = `[tools.NAME] sandbox = "none"`

func noneFor(kind, tool string) string {
	switch kind {
	case "MCP server":
		return fmt.Sprintf(`[mcp.servers.%s] sandbox = "none"`, tomlKey(tool))
	case "placeholder command":
		return `sandbox = "none" in its [[placeholders.command]] table`
	case "command":
		return "--profile none"
	}
	return fmt.Sprintf(`[tools.%s] sandbox = "none"`, tomlKey(tool))
}

func (e *RefusedError) Unwrap() error { return e.Err }

// fix is the configuration that grants refusals to the run's tool.
func (r *Run) fix(refusals []Refusal) string {
	var add Spec
	if !AddRefusals(&add, refusals, r.home) {
		return ""
	}
	return ProfileConfig(r.kind, r.tool, r.Profile, add)
}

// AddRefusals adds to spec what grants refusals (home writes ~/ paths),
// and reports whether it added anything: the node's own files are never
// added, nor what spec grants already.
func AddRefusals(spec *Spec, refusals []Refusal, home string) bool {
	added := false
	for _, f := range refusals {
		switch {
		case f.Own, f.What != "":
		case f.Port > 0 && f.netOff:
			if spec.Network == nil || !*spec.Network {
				spec.Network, added = boolPtr(true), true
			}
		case f.Port > 0:
			if !slices.Contains(spec.ConnectPorts, f.Port) {
				spec.ConnectPorts, added = append(spec.ConnectPorts, f.Port), true
			}
		case f.Socket:
			// The socket itself: its folder may hold other services' sockets.
			if !slices.Contains(spec.Write, f.Path) {
				spec.Write, added = append(spec.Write, f.Path), true
			}
		case f.Write:
			g := grantFor(f.Path, home, true)
			if f.folder {
				g = homeRelative(f.Path, home)
			}
			if !slices.Contains(spec.Write, g) {
				spec.Write, added = append(spec.Write, g), true
			}
		default:
			if g := grantFor(f.Path, home, false); !slices.Contains(spec.Read, g) && !slices.Contains(spec.Write, g) {
				spec.Read, added = append(spec.Read, g), true
			}
		}
	}
	return added
}

func boolPtr(b bool) *bool { return &b }

// withoutGrant are failures no grant fixes, told by a line of the
// program's output under a confining profile, with the program's own way
// to do without what it was refused.
var withoutGrant = []struct {
	mark       *regexp.Regexp
	what, hint string
}{
	{regexp.MustCompile(`No usable sandbox|Running as root without --no-sandbox`),
		"Chromium's own sandbox (built on namespaces, which the node's syscall filter refuses)",
		"start Chromium with --no-sandbox (puppeteer: args: ['--no-sandbox']): the node's sandbox still " +
			"confines the whole browser to the tool's profile (its files and network, no capabilities, " +
			"its syscall filter, ended with the call); what is lost is Chromium's wall between a web page " +
			"and the tool's own rights (see the sandbox docs, Chromium)"},
	{regexp.MustCompile(`bwrap: (?:No permissions to creat\w* new namespace|Creating new namespace failed|setting up uid map)|unshare: unshare failed: Operation not permitted`),
		"a sandbox of the tool's own (bubblewrap, unshare: new namespaces, which the node's syscall filter refuses)",
		"run the command without it (VCPToolBox's LinuxShellExecutor: SANDBOX_BACKEND=none in its config.env): the node's " +
			"sandbox already confines it to the tool's profile, with no capabilities, its syscall filter, and a PID, mount " +
			"and IPC namespace of its own; a tool that must make namespaces runs unconfined, under " + noneForTool},
	{regexp.MustCompile(`Cannot open netlink socket: Operation not permitted`),
		"a netlink socket of a family other than routing (ss asks NETLINK_SOCK_DIAG for its list; the node's syscall filter refuses every netlink family but routing)",
		"nothing to change: ss falls back to /proc/net and prints its list from there; the line is a warning (2>/dev/null hides it)"},
	{regexp.MustCompile(`Failed to create .*user data directory`),
		"Chromium's profile folder in the home directory",
		`start Chromium with --user-data-dir="$TMPDIR/chromium" (or a folder in the tool's own; puppeteer does so itself)`},
}

// withoutGrantIn is the failure no grant fixes that line tells, if any.
func withoutGrantIn(line string) (Refusal, bool) {
	for _, w := range withoutGrant {
		if w.mark.MatchString(line) {
			return Refusal{What: w.what, Hint: w.hint, Line: clip(line)}, true
		}
	}
	return Refusal{}, false
}

// grantFor is what to grant for a refused path: the node_modules a
// package sits in (to read; written, it would let the tool rewrite every
// package there, which other tools run), the folder of a file (programs
// read a file's neighbours too) or of a file to make, unless that folder
// is the home, one of its parents or the root; from ~/ when in the home.
func grantFor(path, home string, write bool) string {
	g := path
	for d := filepath.Dir(path); !write && d != filepath.Dir(d); d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			g = d // a package: the whole node_modules it sits in
			break
		}
	}
	if fi, err := os.Stat(g); err != nil || !fi.IsDir() {
		dir := filepath.Dir(g)
		if dir != "/" && (home == "" || !within(canonical(home), canonical(dir))) {
			g = dir
		}
	}
	return homeRelative(g, home)
}

// homeRelative writes a path in the home from ~/.
func homeRelative(g, home string) string {
	if home != "" && within(g, home) && g != home {
		return "~/" + strings.TrimPrefix(g, home+"/")
	}
	return g
}

// ProfileConfig writes the configuration that gives tool (of kind
// "plugin", "MCP server", "placeholder command" or "command") the
// profile it has plus add: a profile of its own extending a built-in, or
// the lines to add to the configured profile it has.
func ProfileConfig(kind, tool, profile string, add Spec) string {
	var b strings.Builder
	own := profile
	if _, builtin := Builtins()[profile]; builtin {
		own = ProfileName(tool)
		fmt.Fprintf(&b, "[sandbox.profiles.%s]\nextends = %q\n", tomlKey(own), profile)
	} else {
		fmt.Fprintf(&b, "[sandbox.profiles.%s]   # added to this profile's lists\n", tomlKey(own))
	}
	list := func(key string, vals []string) {
		if len(vals) == 0 {
			return
		}
		q := make([]string, len(vals))
		for i, v := range vals {
			q[i] = strconv.Quote(v)
		}
		fmt.Fprintf(&b, "%s = [%s]\n", key, strings.Join(q, ", "))
	}
	list("read", add.Read)
	list("write", add.Write)
	if add.Network != nil && *add.Network {
		b.WriteString("network = true\n")
	}
	if len(add.ConnectPorts) > 0 {
		ps := make([]string, len(add.ConnectPorts))
		for i, p := range add.ConnectPorts {
			ps[i] = strconv.Itoa(p)
		}
		fmt.Fprintf(&b, "connect_ports = [%s]\n", strings.Join(ps, ", "))
	}
	if own == profile {
		return b.String()
	}
	b.WriteString("\n")
	switch kind {
	case "MCP server":
		fmt.Fprintf(&b, "[mcp.servers.%s]\nsandbox = %q\n", tomlKey(tool), own)
	case "placeholder command":
		fmt.Fprintf(&b, "[[placeholders.command]]\nname = %q\nsandbox = %q   # in this command's table\n", tool, own)
	case "command":
		fmt.Fprintf(&b, "# and run the command with --profile %s\n", own)
	default:
		fmt.Fprintf(&b, "[tools.%s]\nsandbox = %q\n", tomlKey(tool), own)
	}
	return b.String()
}

// ProfileName is the name of a tool's own profile (learned or suggested).
func ProfileName(tool string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(tool) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "tool"
	}
	return b.String()
}

// tomlKey quotes a key that is not a bare TOML key.
func tomlKey(k string) string {
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return strconv.Quote(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// clip is a line of output fit for a message.
func clip(line string) string {
	if len(line) > 300 {
		line = line[:300] + "…"
	}
	return strings.ToValidUTF8(line, "\uFFFD")
}
