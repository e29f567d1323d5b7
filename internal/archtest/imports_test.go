// Package archtest enforces the import directions of docs/architecture.md.
package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/vcpnode/vcpnode"

const gorilla = "github.com/gorilla/websocket"

// listImports returns the imports of pkg: its direct ones, or with deps its whole closure.
func listImports(t *testing.T, pkg string, deps bool) map[string]bool {
	t.Helper()
	args := []string{"list", "-f", "{{join .Imports \"\\n\"}}", pkg}
	if deps {
		args = []string{"list", "-deps", pkg}
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	set := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		set[line] = true
	}
	return set
}

func TestImportDirections(t *testing.T) {
	cases := []struct {
		pkg       string
		deps      bool // check the whole closure, not only direct imports
		forbidden []string
	}{
		{module + "/wsproto", true, []string{gorilla, module + "/node", module + "/config", module + "/toolhost", module + "/placeholders", module + "/cmd/vcpnode"}},
		{module + "/toolhost", true, []string{gorilla, module + "/node", module + "/config", module + "/wsproto", module + "/cmd/vcpnode"}},
		// The Node.js host for direct plugins uses toolhost and toolhost/plugin
		// (and process trees and the sandbox, as every process starter).
		{module + "/toolhost/direct", true, []string{gorilla, module + "/node", module + "/config", module + "/wsproto", module + "/placeholders", module + "/cmd/vcpnode"}},
		// The file tool serves files under toolhost's Tool contract and
		// knows nothing of plugins, the node or the config.
		{module + "/toolhost/files", true, []string{gorilla, module + "/node", module + "/config", module + "/wsproto", module + "/cmd/vcpnode",
			module + "/toolhost/plugin", module + "/toolhost/mcp", module + "/toolhost/direct", module + "/toolhost/builtin", module + "/placeholders"}},
		// The workspace built-ins read files through toolhost/files only.
		{module + "/toolhost/builtin", true, []string{gorilla, module + "/node", module + "/config", module + "/wsproto", module + "/cmd/vcpnode"}},
		// Placeholder commands are confined through toolhost/sandbox, given
		// their profile: no config, no node.
		{module + "/placeholders", true, []string{gorilla, module + "/node", module + "/config", module + "/wsproto", module + "/cmd/vcpnode"}},
		// The placeholder feed turns the config into the refresher's jobs; the
		// node hands it a write function per session, so no wire, no socket.
		{module + "/placeholders/feed", true, []string{gorilla, module + "/node", module + "/wsproto", module + "/hubconn", module + "/cmd/vcpnode"}},
		// The config is data and checks: the CLI reads it without the daemon.
		{module + "/config", true, []string{gorilla, module + "/node", module + "/wsproto", module + "/cmd/vcpnode"}},
		// The MCP bridge imports toolhost (and process trees and the sandbox,
		// as every process starter), never the stdio plugin host.
		{module + "/toolhost/mcp", true, []string{gorilla, module + "/node", module + "/config", module + "/wsproto", module + "/cmd/vcpnode",
			module + "/toolhost/plugin", module + "/placeholders"}},
		// The parameter schemas know JSON, not tools: toolhost and every tool
		// source build on them.
		{module + "/toolhost/schema", true, []string{gorilla, module + "/node", module + "/config", module + "/wsproto", module + "/toolhost", module + "/placeholders", module + "/cmd/vcpnode"}},
		// Process trees know nothing of plugins or the node: toolhost/plugin,
		// toolhost/direct, toolhost/mcp and placeholders use it.
		{module + "/toolhost/proctree", true, []string{gorilla, module + "/node", module + "/config", module + "/wsproto", module + "/toolhost", module + "/cmd/vcpnode"}},
		{module + "/controlapi", true, []string{gorilla, module + "/node", module + "/cmd/vcpnode"}},
		// The sandbox knows profiles, the kernel and process trees only.
		{module + "/toolhost/sandbox", true, []string{gorilla, module + "/node", module + "/config", module + "/wsproto", module + "/toolhost", module + "/placeholders", module + "/cmd/vcpnode"}},
		{module + "/node", true, []string{module + "/cmd/vcpnode"}},
		// The event log and audit trail know events and call records, not connections.
		{module + "/events", true, []string{gorilla, module + "/node", module + "/wsproto", module + "/hubconn", module + "/cmd/vcpnode"}},
		// The observer channels reach the socket through hubconn only.
		{module + "/observer", true, []string{module + "/node", module + "/cmd/vcpnode"}},
		// The hub session reaches the socket through hubconn and the node
		// through its Host interface; the bridge through ServerTools.
		{module + "/hubsession", true, []string{module + "/node", module + "/cmd/vcpnode", module + "/control", module + "/observer", module + "/bridge"}},
		// The systemd notifier knows the sd_notify socket only.
		{module + "/sdnotify", true, []string{gorilla, module + "/node", module + "/wsproto", module + "/hubconn", module + "/cmd/vcpnode"}},
		// The outbox knows files and plugin names, not connections.
		{module + "/outbox", true, []string{gorilla, module + "/node", module + "/wsproto", module + "/hubconn", module + "/cmd/vcpnode"}},
		// The liveness core knows sockets, not messages or the daemon.
		{module + "/hubconn", true, []string{module + "/node", module + "/wsproto", module + "/cmd/vcpnode"}},
		{module + "/hubconn", false, []string{module + "/toolhost", module + "/placeholders"}},
		{module + "/toolhost/textproto", true, []string{gorilla, module + "/node", module + "/wsproto", module + "/placeholders", module + "/cmd/vcpnode"}},
		// The text protocol does no I/O: it parses and generates text only.
		{module + "/toolhost/textproto", false, []string{"os", "os/exec", "net", "io/fs", "net/http"}},
		// The console is assets only: every action is the /v1/ API's.
		{module + "/console", true, []string{gorilla, module + "/node", module + "/config", module + "/wsproto", module + "/toolhost", module + "/placeholders", module + "/cmd/vcpnode"}},
		// The CLI reaches the network only through node (and the demo's fake hub).
		{module + "/cmd/vcpnode", false, []string{gorilla}},
		// The docs generator and the snippet checks are built with -tags
		// gendocs or for tests only: the binary links neither.
		{module + "/cmd/vcpnode", true, []string{"github.com/spf13/cobra/doc", module + "/internal/gendocs", module + "/internal/doccheck", "mvdan.cc/sh/v3/syntax"}},
		// Every vcpnode process runs the initialisers of all the binary links,
		// so these stay out of it (docs/performance.md, "Binary size and idle memory").
		{module + "/cmd/vcpnode", true, []string{"encoding/xml", "github.com/prometheus/client_golang/prometheus"}},
		{module + "/internal/doccheck", true, []string{module + "/node", module + "/config", module + "/cmd/vcpnode"}},
		{module + "/internal/gendocs", true, []string{module + "/node", module + "/config", module + "/cmd/vcpnode"}},
	}
	for _, c := range cases {
		t.Run(strings.TrimPrefix(c.pkg, module+"/"), func(t *testing.T) {
			imports := listImports(t, c.pkg, c.deps)
			if len(imports) == 0 {
				t.Fatalf("go list found no imports for %s", c.pkg)
			}
			for _, f := range c.forbidden {
				if imports[f] {
					t.Errorf("%s imports %s, which docs/architecture.md forbids", c.pkg, f)
				}
			}
		})
	}
}

// TestModuleImportsAllowed: the packages split out of the node import
// only these packages of the module, directly; anything else would be a
// back arrow into the daemon.
func TestModuleImportsAllowed(t *testing.T) {
	allowed := map[string][]string{
		// The control API's types and client: no daemon code, so the CLI
		// and the server share them without pulling in the node.
		"controlapi": {"config", "toolhost/textproto"},
		// The liveness core: sockets and redaction, nothing of the daemon.
		"hubconn": {"config"},
		// The config decodes, defaults and checks the file and owns the key
		// and redaction: it builds on leaf packages only (TestConfigIsALeaf).
		"config": {"internal/humantext"},
		// The control servers reach the daemon through their Backend
		// interface, never through node.
		"control": {"config", "console", "controlapi", "toolhost/textproto"},
		// The event log and the audit trail: the node publishes, control streams.
		"events": {"config", "controlapi", "toolhost"},
		// The observer channels: liveness is hubconn's, events go to events.
		"observer": {"config", "controlapi", "events", "hubconn", "toolhost", "wsproto"},
		// The hub session: liveness is hubconn's, calls and tools the
		// node's (Host), placeholder pushes the feed's, callbacks the outbox's.
		"hubsession": {"config", "controlapi", "hubconn", "internal/humantext", "internal/inflight", "outbox", "placeholders/feed", "toolhost", "wsproto"},
		// sd_notify: the status line is redacted with config's rule.
		"sdnotify": {"config"},
		// The outbox stores callbacks; the session hands it a send function.
		"outbox": {"config", "toolhost/plugin"},
		// The placeholder feed: the config's and static plugins' jobs, run
		// by placeholders under the sandbox in process trees.
		"placeholders/feed": {"config", "controlapi", "placeholders", "toolconfig", "toolhost/plugin", "toolhost/proctree", "toolhost/sandbox"},
		// Text for people (durations, typo distances): the config, the
		// tool host and the CLI use it, so it builds on nothing of theirs.
		"internal/humantext": {},
		// Work in progress that a shutdown waits for: the plugin host and
		// the session count with it, so it builds on nothing of theirs.
		"internal/inflight": {},
		// The descriptors a process inherited, kept from its children:
		// the daemon and the tests that start children use it.
		"internal/inheritfd": {},
		// Parameter schemas and argument checking: text rules only.
		"toolhost/schema": {"internal/humantext"},
		// The service-file templates: text in, text out.
		"service/internal/servicetmpl": {},
		// The service commands' logic: the config, the unit and plist
		// texts; the command line is the CLI's.
		"service": {"config", "service/launchd", "service/systemd"},
		// The server's own tools: wire types in, tools out; the session
		// hands it frames, so no socket and no daemon; its messages
		// follow the text rules.
		"bridge": {"toolhost", "wsproto", "internal/humantext"},
		// The plugin folders as a tool source: the plugin and Node.js
		// hosts, the outbox of their callbacks, the source's shape; the
		// node composes it, so nothing of the node or the session.
		"toolsource/plugins": {"config", "controlapi", "outbox", "toolconfig", "toolhost", "toolhost/direct", "toolhost/plugin",
			"toolhost/proctree", "toolhost/sandbox", "toolsource"},
	}
	pkgs := moduleImports(t)
	for pkg, ok := range allowed {
		imports, found := pkgs[module+"/"+pkg]
		if !found {
			t.Errorf("no package %s", pkg)
			continue
		}
		for _, imp := range imports {
			rel, inModule := strings.CutPrefix(imp, module+"/")
			if inModule && !slices.Contains(ok, rel) {
				t.Errorf("%s imports %s; it may import only %v of this module", pkg, rel, ok)
			}
		}
	}
}

// TestOnlyHubconnAndDemohubUseGorilla: gorilla stays behind the liveness
// core (hubconn); demohub is the server side of
// the wire, for the demo and the tests.
func TestOnlyHubconnAndDemohubUseGorilla(t *testing.T) {
	allowed := map[string]bool{module + "/hubconn": true, module + "/demohub": true}
	for pkg, imports := range moduleImports(t) {
		for _, imp := range imports {
			if imp == gorilla && !allowed[pkg] {
				t.Errorf("%s imports %s; only hubconn and demohub may", pkg, imp)
			}
		}
	}
}

// moduleImports maps each package of the module to its direct imports
// (those of its non-test files).
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkgs[fields[0]] = fields[1:]
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list saw only %d packages; is the module layout intact?", len(pkgs))
	}
	return pkgs
}

// TestReleaseBinaryHasNoTestCode: the vcpnode binary links no test
// package: not the tests' fake hub, not a test helper, and nothing that
// imports testing (which would carry the test flags into the program).
func TestReleaseBinaryHasNoTestCode(t *testing.T) {
	deps := listImports(t, module+"/cmd/vcpnode", true)
	for _, bad := range append([]string{"testing", module + "/internal/fakehub"}, testHelpers...) {
		if deps[bad] {
			t.Errorf("cmd/vcpnode links %s", bad)
		}
	}
	for pkg, imports := range moduleImports(t) {
		if deps[pkg] && slices.Contains(imports, "testing") {
			t.Errorf("cmd/vcpnode links %s, which imports testing", pkg)
		}
	}
}

// testHelpers are the packages that exist for tests only; they import
// testing, so a program that linked one would carry the test flags.
var testHelpers = []string{
	module + "/toolhost/proctree/proctreetest",
	module + "/toolhost/sandbox/sandboxtest",
	module + "/internal/testwait",
	module + "/internal/testlog",
	module + "/internal/testnet",
	module + "/internal/testtool",
	module + "/internal/testuser",
	module + "/internal/vmtest",
	module + "/internal/controltest",
	module + "/internal/testmetrics",
	module + "/internal/nodetest",
	module + "/internal/hubtest",
}

// TestTestHelpersStayInTests: only _test files and other test helpers
// may use the test helpers.
func TestTestHelpersStayInTests(t *testing.T) {
	for pkg, imports := range moduleImports(t) {
		if slices.Contains(testHelpers, pkg) {
			continue
		}
		for _, helper := range testHelpers {
			if slices.Contains(imports, helper) {
				t.Errorf("%s imports %s outside its tests", pkg, helper)
			}
		}
	}
}

// TestProgramsLiveInTools: the programs that are not vcpnode (the chaos
// soak, the memory and reconnect checks, the benchmark against the
// official node) live under tools/, each a main package, so internal/
// holds library code and test helpers only and nothing, tests included,
// builds on a program.
func TestProgramsLiveInTools(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Name}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 5 {
		t.Fatalf("go list saw only %d packages; is the module layout intact?", len(lines))
	}
	tools := 0
	for _, line := range lines {
		fields := strings.Fields(line)
		rel := strings.TrimPrefix(fields[0], module+"/")
		inTools := strings.HasPrefix(rel, "tools/")
		isMain := fields[1] == "main"
		switch {
		case inTools && !isMain:
			t.Errorf("%s is package %s; tools/ holds programs (package main) only", rel, fields[1])
		case isMain && !inTools && !strings.HasPrefix(rel, "cmd/"):
			t.Errorf("%s is a program; programs live under cmd/ (vcpnode) or tools/", rel)
		}
		if inTools {
			tools++
		}
		for _, imp := range fields[2:] {
			if strings.HasPrefix(imp, module+"/tools/") {
				t.Errorf("%s imports %s, a program that nothing may import", rel, imp)
			}
		}
	}
	if tools == 0 {
		t.Error("go list found no package under tools/")
	}
}

// TestConfigIsALeaf: config imports nothing of this module but leaf
// packages (ones that import nothing of this module), so that whatever
// needs a setting or redaction does not pull in the tool subsystems. The
// tool settings are translated and checked by toolconfig.
func TestConfigIsALeaf(t *testing.T) {
	pkgs := moduleImports(t)
	for dep := range listImports(t, module+"/config", true) {
		if !strings.HasPrefix(dep, module+"/") || dep == module+"/config" {
			continue
		}
		for _, imp := range pkgs[dep] {
			if strings.HasPrefix(imp, module+"/") {
				t.Errorf("config depends on %s, which imports %s: not a leaf package", dep, imp)
			}
		}
	}
}

// toolModules are the libraries of the tool subsystems only.
var toolModules = []string{"github.com/modelcontextprotocol/go-sdk", "github.com/landlock-lsm/go-landlock", "github.com/robfig/cron/v3"}

// TestLightPackagesStayLight: the packages the CLI and the connection
// share depend on none of the tool subsystems' libraries: the MCP SDK,
// Landlock, cron.
func TestLightPackagesStayLight(t *testing.T) {
	for _, pkg := range []string{"config", "sdnotify", "hubconn", "events", "controlapi"} {
		for dep := range listImports(t, module+"/"+pkg, true) {
			for _, h := range toolModules {
				if dep == h || strings.HasPrefix(dep, h+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// TestRulesNameModulesOfGoMod: every module a rule above keeps out of a
// package is one go.mod has; a rule about a module the build cannot see
// would hold whatever the code does.
func TestRulesNameModulesOfGoMod(t *testing.T) {
	for _, mod := range append([]string{gorilla, "github.com/spf13/cobra", "mvdan.cc/sh/v3", "github.com/prometheus/client_golang"}, toolModules...) {
		if out, err := exec.Command("go", "list", "-m", mod).CombinedOutput(); err != nil {
			t.Errorf("go list -m %s: %v\n%s", mod, err, out)
		}
	}
}

// floors are the storeys of the house, lowest first. A package imports
// only packages on its own floor or below, so a change to a low floor is
// felt above it and never the other way round. A new package takes the
// lowest floor its imports allow.
var floors = [][]string{
	// Text, the wire, process trees, assets: nothing of the node.
	{"", "console", "wsproto", "toolhost/proctree", "toolhost/outpipe", "internal/humantext", "internal/inflight", "internal/inheritfd",
		"service/internal/servicetmpl", "service/servicetest", "internal/testwait", "internal/testlog", "internal/testnet", "internal/testuser", "internal/vmtest", "internal/testmetrics", "internal/archtest",
		"internal/doccheck", "internal/gendocs", "toolhost/proctree/proctreetest", "tools/vminit"},
	// The config, the sandbox, parameter schemas, service files, the demo hub.
	{"config", "toolhost/sandbox", "toolhost/schema", "service/systemd", "service/launchd", "demohub", "internal/fakehub",
		"toolhost/sandbox/sandboxtest"},
	// The tool contract, placeholders, the liveness core, sd_notify, the
	// service commands' logic, the tests' tools.
	{"toolhost", "placeholders", "hubconn", "sdnotify", "service", "internal/testtool", "internal/hubtest"},
	// Tool sources and what they share: files, plugins, MCP, the bridge.
	{"toolhost/files", "toolhost/plugin", "toolhost/mcp", "toolhost/textproto", "toolhost/builtin", "toolhost/direct",
		"bridge", "outbox"},
	// The config turned into options, the control API and its servers,
	// events, the placeholder feed, the observer channels, the hub session;
	// the shape of a tool source and the sources the node composes.
	{"toolconfig", "controlapi", "control", "events", "placeholders/feed", "observer", "hubsession", "internal/controltest",
		"toolsource", "toolsource/servertools", "toolsource/mcpservers", "toolsource/builtins", "toolsource/plugins"},
	// The daemon's composition, and the tests' whole node (for the tests
	// of what it composes).
	{"node", "internal/nodetest"},
	// Programs.
	{"cmd/vcpnode", "tools/soak", "tools/rsscheck", "tools/reconnectcheck", "tools/benchofficial"},
}

// TestNoImportGoesUpAFloor: every package is on a floor, and no import
// runs from a lower floor to a higher one.
func TestNoImportGoesUpAFloor(t *testing.T) {
	floor := map[string]int{}
	for i, pkgs := range floors {
		for _, p := range pkgs {
			floor[p] = i
		}
	}
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }
	for pkg, imports := range moduleImports(t) {
		from, ok := floor[rel(pkg)]
		if !ok {
			t.Errorf("%s is on no floor: add it to floors, on the lowest its imports allow", rel(pkg))
			continue
		}
		for _, imp := range imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			if to, ok := floor[rel(imp)]; ok && to > from {
				t.Errorf("%s (floor %d) imports %s (floor %d): an import may not go up a floor", rel(pkg), from, rel(imp), to)
			}
		}
	}
}
