package builtin

import (
	"strings"
	"testing"
)

func TestIgnoreRules(t *testing.T) {
	root := ignoreRules(nil).parse([]byte("# comment\n\n*.log\r\n/build\nnode_modules/\n**/tmp/**\n"), nil)
	sub := root.parse([]byte("!keep.log\ngen/\n\\#hash\n"), []string{"src"})
	for _, c := range []struct {
		rules ignoreRules
		path  string
		dir   bool
		want  bool
	}{
		{root, "a.log", false, true},
		{root, "src/a.log", false, true},
		{root, "build", true, true},
		{root, "src/build", true, false}, // anchored to the root
		{root, "node_modules", false, false},
		{root, "x/node_modules", true, true},
		{root, "a/tmp/b", false, true},
		{root, "# comment", false, false},
		{sub, "src/keep.log", false, false}, // re-included below
		{sub, "keep.log", false, true},      // but not above
		{sub, "src/other.log", false, true},
		{sub, "src/gen", true, true},
		{sub, "gen", true, false},
		{sub, "src/#hash", false, true},
	} {
		if got := c.rules.ignored(strings.Split(c.path, "/"), c.dir); got != c.want {
			t.Errorf("ignored(%q, dir %t) = %t, want %t", c.path, c.dir, got, c.want)
		}
	}
	if len(root) != 4 || len(sub) != 7 {
		t.Errorf("parsed %d and %d patterns, want 4 and 7", len(root), len(sub))
	}
}

// FuzzIgnoreRules: any .gitignore text and any path is matched without a panic.
func FuzzIgnoreRules(f *testing.F) {
	f.Add("*.log\n!keep.log\n/build/\n**/x/**\n[a-\n\\\n", "src/keep.log", true)
	f.Add("a/**/b\n!", "a/b", false)
	f.Fuzz(func(t *testing.T, text, path string, dir bool) {
		rules := ignoreRules(nil).parse([]byte(text), []string{"d"})
		rules.ignored(strings.Split("d/"+path, "/"), dir)
	})
}
