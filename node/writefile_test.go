package node

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/wsproto"
)

// TestWriteFileThroughHub: WriteFile, exposed, waits for the owner's
// approval by default, then writes inside the root; a write outside the
// roots, or onto the node's own files, is refused once approved.
func TestWriteFileThroughHub(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	stateDir := filepath.Join(root, "state")
	auditLog := filepath.Join(root, "audit.jsonl")
	expose := true
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Files.Roots = []string{root}
		c.Plugins.StateDir = stateDir
		c.Audit.File = auditLog
		c.Tools = map[string]config.ToolConfig{"WriteFile": {Expose: &expose}}
	}})
	conn := h.accept()

	// The default approval is "ask": the call waits for the owner.
	result := asyncCall(h, conn, "w-1", "WriteFile", map[string]string{"path": "docs/hello.md", "content": "# Hello\n"})
	p := h.waitPending(1)
	if p[0].Tool != "WriteFile" || p[0].RequestID != "w-1" {
		t.Fatalf("pending = %+v", p)
	}
	if _, err := h.node.Decide(p[0].ID, true, controlapi.DecisionRequest{}); err != nil {
		t.Fatal(err)
	}
	res := waitResult(h, result)
	want := "created " + filepath.Join(root, "docs/hello.md") + ": 8 bytes (and its folder \"" + filepath.Join(root, "docs") + "\")\n"
	if res.Status != wsproto.StatusSuccess || firstText(t, res) != want {
		t.Fatalf("WriteFile = %+v, want %q", res, want)
	}
	if b, err := os.ReadFile(filepath.Join(root, "docs/hello.md")); err != nil || string(b) != "# Hello\n" {
		t.Fatalf("docs/hello.md = %q, %v", b, err)
	}

	// The node's own files are refused whether they exist yet or not.
	const own = "(the node's owner has denied it|belongs to the node itself)"
	for i, c := range []struct {
		path, want string
	}{
		{filepath.Join(outside, "x.md"), "outside the directories this node serves"},
		{"state/outbox.json", own},
		{"audit.jsonl", own},
		{"config.env", "hold secrets and are never served"}, // a secret by its name
	} {
		id := "w-" + string(rune('2'+i))
		result := asyncCall(h, conn, id, "WriteFile", map[string]string{"path": c.path, "content": "x"})
		p := h.waitPending(1)
		if _, err := h.node.Decide(p[0].ID, true, controlapi.DecisionRequest{}); err != nil {
			t.Fatal(err)
		}
		res := waitResult(h, result)
		if res.Status != wsproto.StatusError || !regexp.MustCompile(c.want).MatchString(res.Error) {
			t.Errorf("WriteFile %s = %+v, want an error saying %q", c.path, res, c.want)
		}
	}
	for _, p := range []string{filepath.Join(outside, "x.md"), filepath.Join(stateDir, "outbox.json"), filepath.Join(root, "config.env")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}
