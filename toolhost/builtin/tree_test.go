package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
)

// project is a small repository with .gitignore files at two levels, hidden
// and secret entries, a dependency folder and a symlink out of the root.
func project(t testing.TB) (root, outside string) {
	t.Helper()
	root, outside = realDir(t), realDir(t)
	writeTree(t, outside, map[string]string{"secret.txt": "outside the root\n"})
	writeTree(t, root, map[string]string{
		".gitignore":                   "# build output\n*.log\nbuild/\n",
		".git/config":                  "[core]\n",
		".env":                         "KEY=1\n",
		".ssh/known_hosts":             "host ssh-ed25519 AAAA\n",
		"a.go":                         "package a\n",
		"debug.log":                    "noise\n",
		"build/x.o":                    "\x00\x01",
		"link":                         "->" + outside,
		"node_modules/pkg/index.js":    "module.exports = 1\n",
		"src/.gitignore":               "gen/\n!keep.log\n",
		"src/main.go":                  "package main\n",
		"src/keep.log":                 "kept by src/.gitignore\n",
		"src/other.log":                "ignored by the root .gitignore\n",
		"src/gen/z.go":                 "package gen\n",
		"src/deep/more/file.txt":       "deep\n",
		"src/deep/more/evenmore/x.txt": "deeper\n",
	})
	return root, outside
}

func newTree(a *files.Access) *treeTool { return New(a, 0)[0].(*treeTool) }

func TestTreeHonoursNestedGitignoreAndSkipsHiddenVendorAndLinks(t *testing.T) {
	root, _ := project(t)
	got := strings.ReplaceAll(run(t, newTree(access(t, nil, root)), nil), root, "ROOT")
	want := `ROOT/ (2 dirs, 2 files)
├── node_modules/ (dependency folder, not listed)
├── src/ (1 dir, 2 files)
│   ├── deep/ (1 dir)
│   │   └── more/ (1 dir, 1 file; not expanded)
│   ├── keep.log
│   └── main.go
├── a.go
└── link (symlink, not followed)

4 directories, 4 files listed; left out: 4 ignored by .gitignore, 5 hidden
`
	if got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}

func TestTreeBelowTheRootHonoursTheRulesAbove(t *testing.T) {
	root, _ := project(t)
	got := run(t, newTree(access(t, nil, root)), args(t, "path", "src", "maxDepth", "1"))
	want := root + `/src/ (1 dir, 2 files)
├── deep/ (1 dir; not expanded)
├── keep.log
└── main.go

1 directory, 2 files listed; left out: 2 ignored by .gitignore, 1 hidden
`
	if got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}

func TestTreeShowHiddenAndNoFilterStillWithholdsSecrets(t *testing.T) {
	root, _ := project(t)
	got := run(t, newTree(access(t, nil, root)), args(t, "showHidden", "true", "filterMode", "none", "maxDepth", 2))
	for _, line := range []string{"├── .git/ (1 file)", "│   └── config", "├── build/ (1 file)", "├── node_modules/ (1 dir)", "│   └── pkg/ (1 file; not expanded)", "├── debug.log", "│   └── other.log", "left out: 2 withheld as secret"} {
		if !strings.Contains(got, line+"\n") && !strings.Contains(got, line) {
			t.Errorf("tree lacks %q:\n%s", line, got)
		}
	}
	if strings.Contains(got, ".env") || strings.Contains(got, ".ssh") {
		t.Errorf("tree names the secret .env:\n%s", got)
	}
}

func TestTreeFilesOff(t *testing.T) {
	root, _ := project(t)
	got := strings.ReplaceAll(run(t, newTree(access(t, nil, root)), args(t, "showFiles", false)), root, "ROOT")
	want := `ROOT/ (2 dirs, 2 files)
├── node_modules/ (dependency folder, not listed)
└── src/ (1 dir, 2 files)
    └── deep/ (1 dir)
        └── more/ (1 dir, 1 file; not expanded)

4 directories listed (files counted, not listed); left out: 4 ignored by .gitignore, 5 hidden
`
	if got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}

func TestTreeRefusesOutsideSecretAndBadInput(t *testing.T) {
	root, outside := project(t)
	tree := newTree(access(t, []string{filepath.Join(root, "src", "deep")}, root))
	for _, c := range []struct {
		name string
		args []any
		is   error
		text string
	}{
		{"symlink out of the root", []any{"path", "link"}, files.ErrOutsideRoots, "outside the directories this node serves"},
		{"absolute outside", []any{"path", outside}, files.ErrOutsideRoots, "outside the directories this node serves"},
		{"dot-dot out", []any{"path", "src/../../"}, files.ErrOutsideRoots, "outside"},
		{"denied", []any{"path", "src/deep"}, files.ErrSecretFile, "denied"},
		{"missing", []any{"path", "nope"}, files.ErrFileUnreadable, "no such file"},
		{"a file", []any{"path", "a.go"}, ErrNotDirectory, "not a directory"},
		{"depth word", []any{"maxDepth", "deep"}, ErrBadArgument, `maxDepth must be a whole number from 1 to 50, got "deep"`},
		{"depth zero", []any{"maxDepth", 0}, ErrBadArgument, "maxDepth must be from 1 to 50, got 0"},
		{"entries too many", []any{"maxEntries", "1e9"}, ErrBadArgument, "maxEntries must be"},
		{"mode", []any{"filterMode", "all"}, ErrBadArgument, `filterMode must be "gitignore" or "none"`},
		{"showFiles", []any{"showFiles", "maybe"}, ErrBadArgument, "showFiles must be true or false"},
		{"path object", []any{"path", map[string]int{"a": 1}}, ErrBadArgument, "path must be a string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := fail(t, tree, args(t, c.args...))
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.text) {
				t.Errorf("error %q (is %v: %v), want %q", err, c.is, errors.Is(err, c.is), c.text)
			}
			if strings.Contains(err.Error(), outside) && c.name != "absolute outside" {
				t.Errorf("error names the place outside the root: %v", err)
			}
		})
	}
	// The deny list also keeps the tree from listing what it covers.
	got := run(t, tree, args(t, "path", "src"))
	if strings.Contains(got, "deep") || !strings.Contains(got, "1 withheld as secret") {
		t.Errorf("denied folder listed:\n%s", got)
	}
}

func TestTreeRefusesASecretRoot(t *testing.T) {
	root := filepath.Join(realDir(t), ".ssh")
	writeTree(t, root, map[string]string{"id_ed25519.pub": "ssh-ed25519 AAAA\n"})
	err := fail(t, newTree(access(t, nil, root)), nil)
	if !errors.Is(err, files.ErrSecretFile) || !strings.Contains(err.Error(), "the files in it hold secrets and are never served") {
		t.Errorf("tree of a root inside .ssh: %v", err)
	}
}

func TestTreeWithoutRoots(t *testing.T) {
	tree := newTree(files.NewAccess(files.Options{}))
	if err := fail(t, tree, nil); !errors.Is(err, files.ErrFileServingDisabled) || err.Error() != "file access is disabled: [files] roots is empty, so this node reads no files" {
		t.Errorf("error %v, want ErrFileServingDisabled", err)
	}
}

func TestTreeOfEveryRoot(t *testing.T) {
	r1, r2 := realDir(t), realDir(t)
	writeTree(t, r1, map[string]string{"one.txt": "1"})
	writeTree(t, r2, map[string]string{"two/": ""})
	got := run(t, newTree(access(t, nil, r1, r2)), nil)
	want := fmt.Sprintf("%s/ (1 file)\n└── one.txt\n\n%s/ (1 dir)\n└── two/ (empty)\n\n1 directory, 1 file listed\n", r1, r2)
	if got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}

// bigTree makes 100 folders of 1000 files each (100,000 files), once per
// test binary; TestMain removes it.
var bigTree = sync.OnceValues(func() (string, error) {
	root, err := os.MkdirTemp("", "vcpnode-bigtree-")
	if err != nil {
		return "", err
	}
	bigTreeRoot.Store(&root)
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return "", err
	}
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
		// The rest are hard links of the first (ext4 allows 65,000 per
		// file): a directory entry each, made 40 times faster than files.
		src := filepath.Join(dir, "f0000.txt")
		if err := os.WriteFile(src, []byte("one line\n"), 0o644); err != nil {
			return "", err
		}
		for f := 1; f < 1000; f++ {
			if err := os.Link(src, filepath.Join(dir, fmt.Sprintf("f%04d.txt", f))); err != nil {
				return "", err
			}
		}
	}
	return root, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("d09*/\n"), 0o644)
})

// bigTreeRoot is set once bigTree has made its folder, for TestMain to remove.
var bigTreeRoot atomic.Pointer[string]

func TestMain(m *testing.M) {
	code := m.Run()
	if root := bigTreeRoot.Load(); root != nil {
		os.RemoveAll(*root)
	}
	os.Exit(code)
}

func big(t testing.TB) string {
	t.Helper()
	root, err := bigTree()
	if err != nil {
		t.Fatalf("making 100,000 files: %v", err)
	}
	return root
}

func TestTree100000FilesAnswersWithinCaps(t *testing.T) {
	root := big(t)
	tree := newTree(access(t, nil, root))

	got := run(t, tree, nil)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	// Header, 500 entries, blank, summary, truncation note.
	if len(lines) != 504 || !strings.HasSuffix(got, "[truncated: reached maxEntries=500; show a subdirectory, or raise maxEntries or lower maxDepth, to see the rest]\n") {
		t.Errorf("%d lines, ending:\n%s", len(lines), strings.Join(lines[max(0, len(lines)-4):], "\n"))
	}
	if lines[0] != root+"/ (90 dirs)" {
		t.Errorf("header %q: d090-d099 should be ignored", lines[0])
	}

	got = run(t, tree, args(t, "showFiles", false, "maxEntries", maxTreeEntries))
	if !strings.Contains(got, "├── d000/ (1000 files)\n") || !strings.Contains(got, "└── d089/ (1000 files)\n") ||
		!strings.HasSuffix(got, "\n90 directories listed (files counted, not listed); left out: 10 ignored by .gitignore, 1 hidden\n") {
		t.Errorf("folders-only tree:\n%s", got)
	}

	tree.budget = 20_000
	got = run(t, tree, args(t, "showFiles", false))
	if !strings.HasSuffix(got, "[truncated: examined 20000 directory entries, the limit of one call; show a subdirectory to see the rest]\n") {
		t.Errorf("budget-limited tree ends:\n%s", got[max(0, len(got)-400):])
	}
}

// cancelAfter returns a context and a directory hook that cancels it when
// the nth directory is about to be read, and counts the reads after that.
func cancelAfter(t *testing.T, n int) (context.Context, func(string), func() int) {
	ctx, cancel := context.WithCancel(testCtx(t))
	t.Cleanup(cancel)
	var mu sync.Mutex
	seen, after := 0, 0
	hook := func(string) {
		mu.Lock()
		defer mu.Unlock()
		seen++
		switch {
		case seen == n:
			cancel()
		case seen > n:
			after++
		}
	}
	return ctx, hook, func() int { mu.Lock(); defer mu.Unlock(); return after }
}

func TestTreeCancelStopsTheWalk(t *testing.T) {
	root := big(t)
	tree := newTree(access(t, nil, root))
	ctx, hook, after := cancelAfter(t, 5)
	tree.onDir = hook
	out, err := tree.Invoke(ctx, toolhost.Call{Args: args(t, "showFiles", false, "maxEntries", maxTreeEntries)})
	if !errors.Is(err, context.Canceled) || !strings.Contains(fmt.Sprint(err), "directory tree of") {
		t.Fatalf("answer %v, error %v; want a cancelled walk", out, err)
	}
	if n := after(); n != 0 {
		t.Errorf("%d directories were read after the cancel", n)
	}
}

func BenchmarkTree100000Files(b *testing.B) {
	root := big(b)
	tree := newTree(access(b, nil, root))
	a := args(b, "showFiles", false, "maxEntries", maxTreeEntries, "filterMode", "none")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tree.Invoke(ctx, toolhost.Call{Args: a}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTreeProject(b *testing.B) {
	root, _ := project(b)
	tree := newTree(access(b, nil, root))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tree.Invoke(ctx, toolhost.Call{}); err != nil {
			b.Fatal(err)
		}
	}
}

// lateClock is a clock that jumps an hour ahead once the nth directory is
// about to be read, as if the walk had taken that long.
func lateClock(n int) (now func() time.Time, hook func(string)) {
	var seen atomic.Int32
	now = func() time.Time {
		if seen.Load() >= int32(n) {
			return time.Now().Add(time.Hour)
		}
		return time.Now()
	}
	return now, func(string) { seen.Add(1) }
}

func TestTreeAnswersWithWhatItHasBeforeTheDeadline(t *testing.T) {
	root := big(t)
	tree := newTree(access(t, nil, root))
	tree.now, tree.onDir = lateClock(6)
	got := run(t, tree, args(t, "showFiles", false, "maxEntries", maxTreeEntries))
	want := root + `/ (90 dirs)
├── d000/ (1000 files)
├── d001/ (1000 files)
├── d002/ (1000 files)
├── d003/ (1000 files)
├── d004/

5 directories listed (files counted, not listed); left out: 10 ignored by .gitignore, 1 hidden
[truncated: stopped early to answer before the call's deadline; show a subdirectory to see the rest]
`
	if got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}
