package direct

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// noteKeeper keeps its notes in the tree's dailynote folder, next to the
// Plugin folder, as VCPToolBox's DailyNote does; like it, it catches its
// error and answers {status: "error"}.
const noteKeeper = `const fs = require('fs'), path = require('path');
module.exports = { async processToolCall(args) {
  try {
    const dir = path.join(__dirname, '..', '..', 'dailynote', args.maid);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'note.txt'), args.content);
    return { status: 'success', result: 'saved' };
  } catch (e) {
    return { status: 'error', error: e.message };
  }
} };
`

// TestSandboxCaughtRefusalNamesPathAndFix: a direct plugin that catches
// the refusal of a write outside its folder and answers with its message
// gets the same explanation as one that throws: the refused path and the
// config that grants it. Under none the note is written.
func TestSandboxCaughtRefusalNamesPathAndFix(t *testing.T) {
	for _, profile := range []string{"default", "none"} {
		t.Run(profile, func(t *testing.T) {
			home := t.TempDir()
			h, sb := sandboxedHost(t, profile, home)
			root, dir := readerRoot(t)
			writeTestFile(t, filepath.Join(dir, "index.js"), noteKeeper)
			tool := findTool(t, h.Load(scanDirect(t, root), Settings{}), "Reader")
			notes := filepath.Join(filepath.Dir(root), "dailynote")
			v, err := invoke(nil, tool, map[string]string{"maid": "Nova", "content": "hello"}, "")
			if profile == "none" {
				if err != nil || readFile(filepath.Join(notes, "Nova", "note.txt")) != "hello" {
					t.Errorf("under none: %s %v, and no note written", asJSON(t, v), err)
				}
				return
			}
			if err == nil {
				t.Fatalf("wrote outside its folder under default: %s", asJSON(t, v))
			}
			for _, want := range []string{`plugin "Reader" was refused by the node's sandbox (profile "default"): write ` + notes,
				"[sandbox.profiles.reader]\nextends = \"default\"\nwrite = [\"" + notes + "\"]\n\n[tools.Reader]\nsandbox = \"reader\"\n", "make the folder first (mkdir -p " + notes + ")"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q: %v", want, err)
				}
			}
			if _, err := os.Stat(notes); !os.IsNotExist(err) {
				t.Errorf("the refused folder exists: %v", err)
			}
			// What the explanation says, done: the folder made, the profile saved.
			if err := os.Mkdir(notes, 0o755); err != nil {
				t.Fatal(err)
			}
			profiles, err := sandbox.Resolve(map[string]sandbox.Spec{"reader": {Extends: "default", Write: []string{notes}}})
			if err != nil {
				t.Fatal(err)
			}
			if err := sb.Update(sandbox.Options{Profiles: profiles, Tools: map[string]string{"Reader": "reader"}, Home: home,
				TempDir: t.TempDir(), Trees: h.trees, Log: zerolog.Nop()}); err != nil {
				t.Fatal(err)
			}
			tool = findTool(t, h.Load(scanDirect(t, root), Settings{}), "Reader")
			if v, err := invoke(nil, tool, map[string]string{"maid": "Nova", "content": "granted"}, ""); err != nil ||
				readFile(filepath.Join(notes, "Nova", "note.txt")) != "granted" {
				t.Errorf("with the grant: %s %v, and no note written", asJSON(t, v), err)
			}
		})
	}
}
