package textproto

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docExample is `<!-- example: NAME -->`, then a fenced reply, then a
// fenced block with what Parse finds in it.
var docExample = regexp.MustCompile("(?s)<!-- example: ([a-z_-]+) -->\n```[a-z]*\n(.*?)```\n+```json\n(.*?)```")

// TestDocsExamples parses every example reply of docs/textproto.md and
// compares the result with the output shown under it (-update rewrites
// the shown output).
func TestDocsExamples(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "textproto.md")
	doc := readFile(t, path)
	matches := docExample.FindAllStringSubmatchIndex(doc, -1)
	seen := map[Format]bool{}
	var out strings.Builder
	last := 0
	for _, m := range matches {
		name, reply, shown := doc[m[2]:m[3]], doc[m[4]:m[5]], doc[m[6]:m[7]]
		res := Parse(reply, Options{})
		for _, c := range res.Calls {
			seen[c.Format] = true
		}
		got := asJSON(t, res)
		if got != shown && !*update {
			t.Errorf("example %s: the docs show\n%s\nParse finds\n%s", name, shown, got)
		}
		out.WriteString(doc[last:m[6]])
		out.WriteString(got)
		last = m[7]
	}
	out.WriteString(doc[last:])
	for _, f := range Formats {
		if !seen[f] {
			t.Errorf("docs/textproto.md has no example with a %s call", f)
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
