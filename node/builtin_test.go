package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/wsproto"
)

// TestWorkspaceToolsThroughHub: the workspace built-ins, once the config
// exposes them, are registered with their generated invocation text and
// answer the server's stringly-typed calls inside the [files] roots only.
func TestWorkspaceToolsThroughHub(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for p, content := range map[string]string{
		".gitignore":     "*.log\n",
		"README.md":      "# demo\nTODO: write more\n",
		"app.log":        "TODO: ignored\n",
		"src/main.go":    "package main\n\n// TODO: everything\nfunc main() {}\n",
		"src/.gitignore": "gen/\n",
		"src/gen/x.go":   "// TODO: generated\n",
		"logo.png":       "\x89PNG\r\n\x1a\n\x00\x00",
	} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "private.txt"), []byte("TODO: outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Files.Roots = []string{root}
		c.Node.ExposedTools = []string{"DirectoryTree", "ReadFile", "SearchFiles"}
	}})
	conn := h.accept()

	reg, err := conn.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	registered := map[string]toolhost.Command{}
	for _, raw := range reg.(wsproto.RegisterTools).Tools {
		var m toolhost.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		registered[m.Name] = m.Capabilities.InvocationCommands[0]
	}
	if len(registered) != 3 {
		t.Fatalf("registered %v, want the three workspace tools", registered)
	}
	if cmd := registered["DirectoryTree"]; !strings.Contains(cmd.Description, "- maxDepth (integer, optional, default 3)") ||
		!strings.HasPrefix(cmd.Example, "<<<[TOOL_REQUEST]>>>\ntool_name:「始」DirectoryTree「末」") {
		t.Errorf("DirectoryTree registered as:\n%s\n%s", cmd.Description, cmd.Example)
	}

	res := h.call(conn, "DirectoryTree", map[string]any{"path": root, "maxDepth": "2", "showFiles": "true", "filterMode": "gitignore", "maid": "Nova"})
	want := root + `/ (1 dir, 3 files)
├── src/ (1 file)
│   └── main.go
├── README.md
├── elsewhere (symlink, not followed)
└── logo.png

1 directory, 4 files listed; left out: 2 ignored by .gitignore, 2 hidden
`
	if res.Status != wsproto.StatusSuccess || firstText(t, res) != want {
		t.Fatalf("DirectoryTree = %+v\n%s\nwant:\n%s", res, res.Result, want)
	}

	res = h.call(conn, "SearchFiles", map[string]any{"pattern": "TODO", "maxMatches": "10"})
	if res.Status != wsproto.StatusSuccess || !strings.HasPrefix(firstText(t, res), filepath.Join(root, "src/main.go")+":3: // TODO: everything\n"+filepath.Join(root, "README.md")+":2: TODO: write more\n\n2 matches in 2 files") {
		t.Fatalf("SearchFiles = %+v", res)
	}

	res = h.call(conn, "ReadFile", map[string]any{"path": "src/main.go", "startLine": "3", "endLine": "3"})
	if res.Status != wsproto.StatusSuccess || firstText(t, res) != filepath.Join(root, "src/main.go")+", lines 3-3 (49 bytes in all):\n// TODO: everything\n" {
		t.Fatalf("ReadFile = %+v", res)
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"ReadFile", map[string]any{"path": "elsewhere/private.txt"}, "outside the directories this node serves"},
		{"ReadFile", map[string]any{"path": "logo.png"}, "it is a binary file"},
		{"DirectoryTree", map[string]any{"maxDepth": "deep"}, "invalid arguments for DirectoryTree"},
		{"SearchFiles", map[string]any{"pattern": "("}, "pattern is not a valid RE2 regular expression"},
	} {
		res := h.call(conn, c.tool, c.args)
		if res.Status != wsproto.StatusError || !strings.Contains(res.Error, c.want) || strings.Contains(res.Error, outside) {
			t.Errorf("%s %v = %+v, want an error saying %q", c.tool, c.args, res, c.want)
		}
	}
}
