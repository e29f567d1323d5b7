package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// TestConfigCheckWarnsAboutUnknownCommands: a [tools.X.commands.Y] table
// that can never apply is a warning at its place in the file: Y is not a
// command of the plugin X (a near miss in case named), or X has a single
// command. A table of a real command is not.
func TestConfigCheckWarnsAboutUnknownCommands(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples", "Plugin"))
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, "c.toml", "[hub]\nkey = \"k\"\n[plugins]\ndirs = [\""+examples+"\"]\n"+
		"[tools.UnitConverter.commands.ListUnits]\napproval = \"auto\"\n"+ // line 5
		"[tools.UnitConverter.commands.convert]\napproval = \"deny\"\n"+ // line 7
		"[tools.UnitConverter.commands.Rename]\napproval = \"deny\"\n"+ // line 9
		"[tools.DirectoryTree.commands.List]\napproval = \"auto\"\n", 0o600) // line 11
	ta := newTestApp(t)
	if code := ta.run("config", "check", "--config", path); code != exitOK {
		t.Errorf("exit %d, want %d (warnings only): %s%s", code, exitOK, ta.stdout, ta.stderr)
	}
	out := ta.stdout.String()
	for _, want := range []string{
		"warning: " + path + `:7:2: tools.UnitConverter.commands.convert: UnitConverter has no command "convert" (its commands: Convert, ListUnits); did you mean "Convert"? command names match exactly`,
		"warning: " + path + `:9:2: tools.UnitConverter.commands.Rename: UnitConverter has no command "Rename" (its commands: Convert, ListUnits)` + "\n",
		"warning: " + path + ":11:2: tools.DirectoryTree.commands.List: DirectoryTree has a single command, which every call runs: set [tools.DirectoryTree] approval instead",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks\n%s\n in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ListUnits:") || strings.Count(out, "warning: ") != 3 {
		t.Errorf("want exactly the three warnings:\n%s", out)
	}
}

// An MCP server's commands are its tools, known once it runs: config
// check asks the daemon running with the file, and without one says the
// table was not checked.
func TestConfigCheckWarnsAboutUnknownMCPCommands(t *testing.T) {
	_, url := testMCPServer(t, "alpha", "beta")
	server := "[mcp.servers.img]\nurl = \"" + url + "\"\n"
	d := startDaemon(t, server)
	d.accept()
	testwait.For(t, "the MCP server's tools in the daemon", func() bool {
		var st controlapi.StatusResponse
		d.ctlJSON(&st, "status")
		return len(st.MCPServers) == 1 && st.MCPServers[0].Tools == 2
	})
	tables := "[tools.McpImg.commands.alpha]\napproval = \"auto\"\n" +
		"[tools.McpImg.commands.gamma]\napproval = \"deny\"\n" // line 6 with the header below
	path := writeFile(t, "c.toml", "[hub]\nkey = \"k\"\n"+server+tables+"[control]\nsocket = \""+d.socket+"\"\n", 0o600)
	ta := newTestApp(t)
	if code := ta.run("config", "check", "--config", path); code != exitOK {
		t.Errorf("exit %d: %s%s", code, ta.stdout, ta.stderr)
	}
	out := ta.stdout.String()
	if want := "warning: " + path + `:7:2: tools.McpImg.commands.gamma: McpImg has no command "gamma" (its commands: alpha, beta`; !strings.Contains(out, want) {
		t.Errorf("output lacks\n%s\nin:\n%s", want, out)
	}
	if strings.Contains(out, "commands.alpha") {
		t.Errorf("a table of a real command was warned about:\n%s", out)
	}

	// No daemon on the file's socket: not checked, said at the table.
	path = writeFile(t, "c.toml", "[hub]\nkey = \"k\"\n"+server+tables+"[control]\nsocket = \""+filepath.Join(t.TempDir(), "none.sock")+"\"\n", 0o600)
	ta = newTestApp(t)
	if code := ta.run("config", "check", "--config", path); code != exitOK {
		t.Errorf("exit %d: %s%s", code, ta.stdout, ta.stderr)
	}
	if want := "warning: " + path + ":5:2: tools.McpImg.commands.alpha: not checked against the commands of McpImg: they come from mcp:img and are known once it runs"; !strings.Contains(ta.stdout.String(), want) {
		t.Errorf("output lacks\n%s\nin:\n%s", want, ta.stdout)
	}
}
