package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepoLinks: every relative link of README.md and docs/ names a file
// that exists and, with an anchor, a heading of that file.
func TestRepoLinks(t *testing.T) {
	repo := filepath.Join("..", "..")
	docs, err := Documents(repo)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, doc := range docs {
		links, err := Links(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			n++
			target := doc
			if l.Target != "" {
				target = filepath.Join(filepath.Dir(doc), filepath.FromSlash(l.Target))
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s:%d: link to %s: %v", doc, l.Line, l.Target, err)
				continue
			}
			if l.Anchor == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			anchors, err := Anchors(target)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors[l.Anchor] {
				t.Errorf("%s:%d: link to %s#%s: no such heading", doc, l.Line, l.Target, l.Anchor)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d links found: is the extraction broken?", n)
	}
}

// TestReadmeIsAnEntryPage: the README stays short; the reference lives
// in docs/.
func TestReadmeIsAnEntryPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n >= 400 {
		t.Errorf("README.md has %d lines; keep it under 400 and put reference material in docs/", n)
	}
}
