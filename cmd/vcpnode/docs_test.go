package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vcpnode/vcpnode/internal/gendocs"
)

const regenerateDocs = "regenerate with: go generate ./cmd/vcpnode (or go run -tags gendocs ./cmd/vcpnode -markdown docs/commands)"

// TestCommandDocsAreCurrent: docs/commands is what the command tree
// generates now, page for page; a new command or flag fails it until the
// pages are regenerated.
func TestCommandDocsAreCurrent(t *testing.T) {
	fresh := t.TempDir()
	if err := gendocs.Markdown(newRootCmd(docsApp()), fresh); err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("..", "..", "docs", "commands")
	want, got := mdPages(t, fresh), mdPages(t, committed)
	if !slices.Equal(want, got) {
		t.Fatalf("docs/commands has the pages %v, the commands make %v; %s", got, want, regenerateDocs)
	}
	if len(want) < 20 {
		t.Fatalf("only %d pages generated: %v", len(want), want)
	}
	for _, name := range want {
		w, err := os.ReadFile(filepath.Join(fresh, name))
		if err != nil {
			t.Fatal(err)
		}
		g, err := os.ReadFile(filepath.Join(committed, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(w) != string(g) {
			t.Errorf("docs/commands/%s is stale; %s", name, regenerateDocs)
		}
	}
}

func mdPages(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	slices.Sort(names)
	return names
}
