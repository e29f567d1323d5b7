package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// bigConfigWithProblems is a config of about size bytes made of [tools.X]
// tables, each with an out-of-range timeout (a problem Parse locates
// itself) and, with unknownKeys, a misspelt key (located by go-toml), like
// a long config pasted from somewhere else.
func bigConfigWithProblems(size int, unknownKeys bool) (doc []byte, problems int) {
	var b strings.Builder
	b.WriteString("[hub]\nurl = \"ws://127.0.0.1:6005\"\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "[tools.Tool%04d]\n# a comment line to make the table longer\nexpose = true\ntimeout = \"100ms\"\nmax_concurrent = 2\n", i)
		problems++
		if unknownKeys {
			b.WriteString("timout = \"1s\"\n")
			problems++
		}
		b.WriteString("\n")
	}
	return []byte(b.String()), problems
}

// BenchmarkParseManyProblems parses a 64 KiB config with a problem in
// every table: go test ./config -run '^$' -bench ParseManyProblems -benchmem
func BenchmarkParseManyProblems(b *testing.B) {
	for _, unknown := range []bool{false, true} {
		name := "values"
		if unknown {
			name = "values+unknown_keys"
		}
		b.Run(name, func(b *testing.B) {
			doc, want := bigConfigWithProblems(64*KiB, unknown)
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				_, err := Parse(doc, "big.toml")
				var ce *Error
				if !errors.As(err, &ce) || len(ce.Problems) != want {
					b.Fatalf("got %d problems, want %d", len(ce.Problems), want)
				}
			}
		})
	}
}

// The line index agrees with counting from the top, at every offset.
func TestLineStartsPosition(t *testing.T) {
	for _, doc := range []string{"", "a", "\n", "a\n", "ab\r\ncd\n\n[x]\ny = 1", "\n\nz"} {
		ls := indexLines([]byte(doc))
		for off := 0; off <= len(doc); off++ {
			line, col := 1+strings.Count(doc[:off], "\n"), off-strings.LastIndexByte(doc[:off], '\n')
			if got := ls.position(off); got != [2]int{line, col} {
				t.Errorf("%q offset %d: got %v, want %d:%d", doc, off, got, line, col)
			}
		}
	}
}

// A table or key written twice, as a snippet pasted below the table of the
// same name that the written config already has, names the first one's line.
func TestDuplicateNamesTheFirst(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"[files]\nroots = []\n\n[log]\nlevel = \"info\"\n\n[files]\nroots = [\"/x\"]\n",
			"c.toml:7:2: files: table files already exists (first at line 1: edit that one instead of adding another)"},
		{"[tools.A]\nexpose = true\n[tools.B]\nexpose = true\n[tools.A]\nexpose = false\n",
			"c.toml:5:2: tools.A: table A already exists (first at line 1: edit that one instead of adding another)"},
		{"[hub]\nurl = \"ws://a:6005\"\n[observer]\nurl = \"ws://b:6005\"\nurl = \"ws://c:6005\"\n",
			"c.toml:5:1: url: key url is already defined (first at line 4: edit that one instead of adding another)"},
	} {
		_, err := Parse([]byte(c.doc), "c.toml")
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\ngot  %v\nwant %s", c.doc, err, c.want)
		}
	}
}

// A table under a misspelt parent, like [tool.ReadFile] for
// [tools.ReadFile], is named with the table meant, its tool name kept.
func TestUnknownTableSuggestsTheTableMeant(t *testing.T) {
	for doc, want := range map[string]string{
		"[tool.ReadFile]\nexpose = true\n":     "c.toml:1:2: tool.ReadFile: unknown key (did you mean [tools.ReadFile]?)",
		"[nothinglike.ReadFile]\nexpose = 1\n": "c.toml:1:2: nothinglike.ReadFile: unknown key",
	} {
		_, err := Parse([]byte(doc), "c.toml")
		if err == nil || err.Error() != want {
			t.Errorf("%q:\ngot  %v\nwant %s", doc, err, want)
		}
	}
}
