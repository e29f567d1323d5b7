package plugin

import (
	"os"
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

// TestPinsMoveTo: pins moved to another state directory are written there,
// merged with the pins a file there keeps of other folders (those in force
// win), and kept there from then on; the old file stays as it was. An
// unreadable file there refuses the move and changes nothing.
func TestPinsMoveTo(t *testing.T) {
	from, to, bad := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, to, PinsFile, `{"/p/Tool":{"name":"Stale","pluginType":"static"},"/p/Other":{"name":"Other","pluginType":"synchronous"}}`)
	writeFile(t, bad, PinsFile, `{not json`)
	pins, err := OpenPins(from)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pins.apply("/p/Tool", &manifest{name: "Tool", pluginType: "synchronous", command: "sh run.sh"}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(from, PinsFile))

	if err := pins.MoveTo(bad); err == nil || pins.Path() != filepath.Join(from, PinsFile) {
		t.Fatalf("move to an unreadable file: %v, pins now in %s", err, pins.Path())
	}
	if err := pins.MoveTo(to); err != nil {
		t.Fatal(err)
	}
	if _, err := pins.apply("/p/New", &manifest{name: "New", pluginType: "synchronous", command: "sh new.sh"}); err != nil {
		t.Fatal(err)
	}
	moved, err := OpenPins(to) // as the next start reads them
	if err != nil {
		t.Fatal(err)
	}
	for folder, name := range map[string]string{"/p/Tool": "Tool", "/p/Other": "Other", "/p/New": "New"} {
		if got := moved.pins[folder].Name; got != name {
			t.Errorf("%s pinned as %q in the new state directory, want %q", folder, got, name)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(from, PinsFile)); string(after) != string(before) {
		t.Errorf("the old file changed:\n%s", after)
	}
}
