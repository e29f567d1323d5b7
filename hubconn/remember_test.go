package hubconn

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRememberedKeepsEachEndpointsWay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state", "hub-auth.json")
	const node, obs = "ws://h:6005/vcp-distributed-server", "ws://h:6005/VCPlog"
	var errs []error
	r := &Remembered{File: file, OnSaveError: func(err error) { errs = append(errs, err) }}
	if w := r.first(node); w != "" {
		t.Fatalf("first with no file = %q", w)
	}
	r.worked(node, AuthPath, false) // the header was refused first
	if r.Recalled() || r.Way() != AuthPath {
		t.Fatalf("learned: way %q, recalled %v", r.Way(), r.Recalled())
	}

	// The next process.
	r2 := &Remembered{File: file}
	if w := r2.first(node); w != AuthPath {
		t.Fatalf("the next process tries %q first, want path", w)
	}
	if w := r2.first(obs); w != "" {
		t.Fatalf("another endpoint's way = %q", w)
	}
	r2.worked(node, AuthPath, true)
	if !r2.Recalled() {
		t.Error("the way from the file, working at once, is not marked remembered")
	}
	r2.worked(obs, AuthHeader, true)
	data, _ := os.ReadFile(file)
	if !strings.Contains(string(data), `"`+node+`": "path"`) || !strings.Contains(string(data), `"`+obs+`": "header"`) {
		t.Errorf("file:\n%s", data)
	}
	// Same endpoint, the other way: learned anew.
	r2.worked(node, AuthHeader, false)
	r2.worked(obs, AuthHeader, true)
	if r3 := (&Remembered{File: file}); r3.first(node) != AuthHeader {
		t.Errorf("the way learned anew was not kept")
	}

	// Endpoints come and go (a changed hub.url): the file keeps the last
	// written, never more than maxWays.
	for i := range 2 * maxWays {
		r2.worked(fmt.Sprintf("ws://h%d:6005/vcp-distributed-server", i), AuthPath, false)
	}
	f, err := readWays(file)
	if err != nil || len(f.Ways) != maxWays || len(f.Recent) != maxWays || f.Recent[0] != fmt.Sprintf("ws://h%d:6005/vcp-distributed-server", 2*maxWays-1) {
		t.Fatalf("after many endpoints: %d ways, recent %v, %v", len(f.Ways), f.Recent, err)
	}
	if _, kept := f.Ways[node]; kept {
		t.Errorf("the oldest endpoint was kept over newer ones")
	}

	// A file that is not ours: reported, then replaced.
	if err := os.WriteFile(file, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	r4 := &Remembered{File: file, OnSaveError: func(err error) { errs = append(errs, err) }}
	if w := r4.first(node); w != "" || len(errs) != 1 || !strings.Contains(errs[0].Error(), "not a file of remembered hub auth ways") {
		t.Fatalf("first over a bad file = %q, errors %v", w, errs)
	}
	r4.worked(node, AuthPath, false)
	if r5 := (&Remembered{File: file}); r5.first(node) != AuthPath {
		t.Error("a bad file was not replaced")
	}
	if len(errs) != 2 {
		t.Errorf("errors: %v; want the bad file reported when read and when replaced", errs)
	}
}

// TestRememberedSetFileMovesTheWay: a new file takes the way known now at
// once, and later ways go to it, not to the old one.
func TestRememberedSetFileMovesTheWay(t *testing.T) {
	dir := t.TempDir()
	oldFile, newFile := filepath.Join(dir, "old", "hub-auth.json"), filepath.Join(dir, "new", "hub-auth.json")
	const a, b = "ws://a:6005/vcp-distributed-server", "ws://b:6005/vcp-distributed-server"
	r := &Remembered{File: oldFile}
	r.SetFile(newFile) // nothing known yet: nothing written
	if _, err := os.Stat(newFile); !os.IsNotExist(err) {
		t.Fatalf("a file was written with no way known: %v", err)
	}
	r.worked(a, AuthPath, false)
	r.SetFile(oldFile)
	r.SetFile(newFile)
	if w := (&Remembered{File: newFile}).first(a); w != AuthPath {
		t.Fatalf("the new file holds %q for the way known, want path", w)
	}
	r.SetFile(oldFile)
	r.worked(b, AuthHeader, false)
	r.SetFile(newFile)
	r.worked(b, AuthPath, false)
	if w := (&Remembered{File: newFile}).first(b); w != AuthPath {
		t.Errorf("the new file holds %q for the later way, want path", w)
	}
	if w := (&Remembered{File: oldFile}).first(b); w != AuthHeader {
		t.Errorf("the old file holds %q: a way after the move went there", w)
	}
}
