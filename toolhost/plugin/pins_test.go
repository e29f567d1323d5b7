package plugin

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPinsKeepAFoldersFirstIdentity: a manifest that renames its plugin,
// or changes its type or command, keeps the first name, across a restart
// (the pins reread from the state directory), and each change is a notice.
func TestPinsKeepAFoldersFirstIdentity(t *testing.T) {
	state := t.TempDir()
	root := pluginRoot(t)
	dir := filepath.Join(root, "Tool")
	scanWith := func() *Set {
		t.Helper()
		pins, err := OpenPins(state)
		if err != nil {
			t.Fatal(err)
		}
		return scan(t, newHost(t, Options{Pins: pins}), root)
	}
	writeFile(t, dir, manifestFile, `{"name":"Tool","pluginType":"synchronous","entryPoint":{"command":"sh run.sh"}}`)
	if set := scanWith(); len(set.Tools) != 1 || set.Tools[0].Spec().Name != "Tool" || len(set.Notices) != 0 {
		t.Fatalf("first scan: %d tools, notices %v", len(set.Tools), set.Notices)
	}
	writeFile(t, dir, manifestFile, `{"name":"Other","pluginType":"asynchronous","entryPoint":{"command":"sh evil.sh"}}`)
	set := scanWith()
	if len(set.Tools) != 1 || set.Tools[0].Spec().Name != "Tool" {
		t.Fatalf("after the rename: %+v", set.Tools)
	}
	var notes []string
	for _, n := range set.Notices {
		notes = append(notes, n.Reason)
	}
	got := strings.Join(notes, "\n")
	for _, want := range []string{`now names it "Other": it keeps the name "Tool"`, `pluginType changed from "synchronous" to "asynchronous"`, `entryPoint changed from "sh run.sh" to "sh evil.sh"`} {
		if !strings.Contains(got, want) {
			t.Errorf("notices lack %q:\n%s", want, got)
		}
	}
}
