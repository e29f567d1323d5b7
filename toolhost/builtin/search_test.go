package builtin

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
)

func newSearch(a *files.Access) *searchTool { return New(a, 0)[2].(*searchTool) }

func TestSearchIsGitignoreAwareAndSkipsWhatItMust(t *testing.T) {
	root, _ := project(t)
	writeTree(t, root, map[string]string{
		"src/main.go":     "package main\n\nfunc main() {\n\tprintln(\"package\")\r\n}\n",
		"src/blob.bin":    "package\x00binary",
		"src/id.txt":      "package notes\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n",
		"src/deep/a.txt":  "Package deep\n",
		"docs/readme.md":  "the package layout\n",
		"src/deep/.hide":  "package hidden\n",
		"src/deep/gen.go": "package gen\n",
	})
	search := newSearch(access(t, nil, root))
	got := strings.ReplaceAll(run(t, search, args(t, "pattern", `^package|"package"`)), root, "ROOT")
	// Folders first, as the tree lists them.
	want := `ROOT/src/deep/gen.go:1: package gen
ROOT/src/main.go:1: package main
ROOT/src/main.go:4: 	println("package")
ROOT/a.go:1: package a

4 matches in 3 files (searched 10 files, 205 bytes, under ROOT)
skipped: 1 binary, 1 withheld as secret, 4 ignored by .gitignore, 6 hidden
`
	if got != want {
		t.Errorf("search:\n%s\nwant:\n%s", got, want)
	}

	// Case, include, and a subdirectory with the root's rules still applied.
	got = strings.ReplaceAll(run(t, search, args(t, "pattern", "^package", "ignoreCase", "true", "path", "src/deep", "include", "*.txt")), root, "ROOT")
	want = `ROOT/src/deep/a.txt:1: Package deep

1 match in 1 file (searched 3 files, 25 bytes, under ROOT/src/deep)
skipped: 1 hidden
`
	if got != want {
		t.Errorf("search:\n%s\nwant:\n%s", got, want)
	}

	got = run(t, search, args(t, "pattern", "no such text anywhere", "path", "src"))
	if want := fmt.Sprintf("no line matches /no such text anywhere/ in 8 files under %s/src\n", root); !strings.HasPrefix(got, want) {
		t.Errorf("no match: %q, want prefix %q", got, want)
	}
}

func TestSearchBounds(t *testing.T) {
	root := realDir(t)
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("f%02d.txt", i)] = strings.Repeat("match here\n", 10)
	}
	files["long.txt"] = "match " + strings.Repeat("z", 1000) + "\n"
	writeTree(t, root, files)
	search := newSearch(access(t, nil, root))

	got := run(t, search, args(t, "pattern", "match", "maxMatches", 25))
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 25+3 || lines[24] != filepath.Join(root, "f02.txt")+":5: match here" ||
		lines[27] != "[truncated: reached maxMatches=25; narrow the pattern or the path, or raise maxMatches, to see the rest]" {
		t.Errorf("capped search:\n%s", got)
	}

	got = run(t, search, args(t, "pattern", "^match z", "path", "long.txt"))
	if !strings.HasPrefix(got, filepath.Join(root, "long.txt")+":1: match "+strings.Repeat("z", maxMatchText-6)+" …\n") {
		t.Errorf("long line: %q", got)
	}

	search.bytes = 1000
	got = run(t, search, args(t, "pattern", "nothing"))
	if !strings.HasSuffix(got, "[truncated: read 990 bytes, the limit of one call; search a subdirectory or use include to cover the rest]\n") {
		t.Errorf("byte-limited search: %q", got)
	}

	search.bytes, search.budget = 0, 10
	got = run(t, search, args(t, "pattern", "nothing"))
	if !strings.HasSuffix(got, "[truncated: examined 10 directory entries, the limit of one call; search a subdirectory to cover the rest]\n") {
		t.Errorf("entry-limited search: %q", got)
	}
}

func TestSearchRefusals(t *testing.T) {
	root, outside := project(t)
	search := newSearch(access(t, nil, root))
	for _, c := range []struct {
		name string
		args []any
		is   error
		text string
	}{
		{"bad regexp", []any{"pattern", "a(b"}, ErrBadArgument, "pattern is not a valid RE2 regular expression: error parsing regexp: missing closing ): `a(b`"},
		{"perl lookahead", []any{"pattern", "a(?=b)"}, ErrBadArgument, "invalid or unsupported Perl syntax"},
		{"no pattern", []any{"path", "src"}, ErrBadArgument, "pattern is required"},
		{"bad glob", []any{"pattern", "x", "include", "[a"}, ErrBadArgument, `include "[a" is not a valid glob`},
		{"bad max", []any{"pattern", "x", "maxMatches", 5000}, ErrBadArgument, "maxMatches must be from 1 to 1000, got 5000"},
		{"symlink out", []any{"pattern", "x", "path", "link"}, files.ErrOutsideRoots, "outside"},
		{"outside", []any{"pattern", "x", "path", outside}, files.ErrOutsideRoots, "outside"},
		{"secret file", []any{"pattern", "x", "path", ".env"}, files.ErrSecretFile, "never served"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := fail(t, search, args(t, c.args...))
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.text) {
				t.Errorf("error %q (is %v: %v), want %q", err, c.is, errors.Is(err, c.is), c.text)
			}
		})
	}
	// The file behind the symlink out of the root is never searched.
	if got := run(t, search, args(t, "pattern", "outside the root", "filterMode", "none", "showHidden", true)); !strings.HasPrefix(got, "no line matches") {
		t.Errorf("search reached outside the root:\n%s", got)
	}
}

func TestSearchCancelStopsTheWalk(t *testing.T) {
	root := big(t)
	search := newSearch(access(t, nil, root))
	ctx, hook, after := cancelAfter(t, 3)
	search.onDir = hook
	out, err := search.Invoke(ctx, toolhost.Call{Args: args(t, "pattern", "never matches")})
	if !errors.Is(err, context.Canceled) || !strings.Contains(fmt.Sprint(err), "search of") {
		t.Fatalf("answer %v, error %v; want a cancelled search", out, err)
	}
	if n := after(); n != 0 {
		t.Errorf("%d directories were read after the cancel", n)
	}
}

func BenchmarkSearch100000Files(b *testing.B) {
	root := big(b)
	search := newSearch(access(b, nil, root))
	a := args(b, "pattern", `line\s+\d`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := search.Invoke(ctx, toolhost.Call{Args: a}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSearchAnswersWithWhatItHasBeforeTheDeadline(t *testing.T) {
	root := big(t)
	search := newSearch(access(t, nil, root))
	search.now, search.onDir = lateClock(3)
	got := run(t, search, args(t, "pattern", "^one", "maxMatches", maxSearchMatches))
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	// The clock jumps as the third folder (d001) is opened: d000 is searched.
	if len(lines) != 1000+4 || lines[999] != filepath.Join(root, "d000", "f0999.txt")+":1: one line" ||
		lines[1003] != "[truncated: stopped early to answer before the call's deadline; search a subdirectory to cover the rest]" {
		t.Errorf("%d lines, ending:\n%s", len(lines), strings.Join(lines[max(0, len(lines)-4):], "\n"))
	}
}
