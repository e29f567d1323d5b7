package builtin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/toolhost/files"
)

// readDirChunk is how many entries are read between checks of the context,
// so a directory of a million entries cannot hold off a cancel.
const readDirChunk = 512

// vendorDirs hold other people's code: listed, never entered, unless the
// caller asks for hidden and vendor folders.
var vendorDirs = map[string]bool{
	"node_modules":     true,
	"bower_components": true,
	"jspm_packages":    true,
	"vendor":           true,
	"__pycache__":      true,
	"venv":             true,
	"site-packages":    true,
}

type entryKind uint8

const (
	kindFile entryKind = iota
	kindDir
	kindSymlink
	kindOther // fifo, socket, device: listed, never read
)

type entry struct {
	name   string
	kind   entryKind
	vendor bool // a dependency folder: listed, not entered
}

// listing is one directory's entries after filtering, directories first,
// each group by name, with what was left out counted.
type listing struct {
	entries                   []entry
	dirs, files               int
	ignored, hidden, withheld int
}

// walker lists directories under one root for the tree and the search.
type walker struct {
	access     *files.Access
	root       string // resolved root holding every directory listed
	gitignore  bool   // honour .gitignore files
	showHidden bool   // list dot entries and enter vendor folders
	// budget is how many directory entries may still be examined; it bounds
	// the work of one call whatever the tree's shape.
	budget int
	limit  int // the budget the walk started with, for messages
	// stopAt, when set, is when the walk gives up and answers with what it
	// has, a little before the call's deadline (see softDeadline).
	stopAt    time.Time
	outOfTime bool
	// now is time.Now; tests replace it.
	now func() time.Time
	// onDir, when set (tests), is called before each directory is read.
	onDir func(dir string)
}

// errBudget stops a walk whose entry budget or time ran out; callers report
// it as truncation (see walker.truncation), not failure.
var errBudget = errors.New("entry budget exhausted")

// softDeadline is when a walk under ctx should stop to leave time for its
// answer: a tenth of the time left, at least 500 ms and at most 3 s, before
// the deadline. Zero when ctx has none.
func softDeadline(ctx context.Context) time.Time {
	dl, ok := ctx.Deadline()
	if !ok {
		return time.Time{}
	}
	reserve := min(max(time.Until(dl)/10, 500*time.Millisecond), 3*time.Second)
	return dl.Add(-reserve)
}

// overtime reports, and remembers, that the walk has reached stopAt.
func (w *walker) overtime() bool {
	if w.stopAt.IsZero() {
		return false
	}
	now := time.Now
	if w.now != nil {
		now = w.now
	}
	if !w.outOfTime && now().After(w.stopAt) {
		w.outOfTime = true
	}
	return w.outOfTime
}

// truncation says why the walk stopped early and what to do (hint) instead.
func (w *walker) truncation(hint string) string {
	if w.outOfTime {
		return "stopped early to answer before the call's deadline; " + hint
	}
	return fmt.Sprintf("examined %d directory entries, the limit of one call; %s", w.limit, hint)
}

// list reads dir (symlink-free, inside w.root; path its components below
// the root) and filters it with rules, the patterns in force above dir. It
// returns the listing and the rules in force inside dir. When the budget
// runs out it returns what it read, and errBudget.
func (w *walker) list(ctx context.Context, dir string, path []string, rules ignoreRules) (listing, ignoreRules, error) {
	if w.onDir != nil {
		w.onDir(dir)
	}
	if err := ctx.Err(); err != nil {
		return listing{}, nil, context.Cause(ctx)
	}
	raw, budgetErr := w.readDir(ctx, dir)
	if budgetErr != nil && !errors.Is(budgetErr, errBudget) {
		return listing{}, nil, budgetErr
	}
	if w.gitignore && slices.ContainsFunc(raw, func(d fs.DirEntry) bool { return d.Name() == ".gitignore" && d.Type().IsRegular() }) {
		rules = rules.with(dir, path)
	}
	var l listing
	child := make([]string, len(path)+1)
	copy(child, path)
	for _, d := range raw {
		name := d.Name()
		e := entry{name: name, kind: kindOf(d.Type())}
		isDir := e.kind == kindDir
		if !w.showHidden && strings.HasPrefix(name, ".") {
			l.hidden++
			continue
		}
		if w.access.Withheld(dir, name, isDir) {
			l.withheld++
			continue
		}
		child[len(path)] = name
		if w.gitignore && rules.ignored(child, isDir) {
			l.ignored++
			continue
		}
		if isDir {
			e.vendor = !w.showHidden && vendorDirs[name]
			l.dirs++
		} else {
			l.files++
		}
		l.entries = append(l.entries, e)
	}
	slices.SortFunc(l.entries, func(a, b entry) int {
		if c := cmp.Compare(b2i(a.kind != kindDir), b2i(b.kind != kindDir)); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return l, rules, budgetErr
}

// readDir reads dir's entries in chunks, checking ctx and the budget
// between them. The directory is opened without following a symlink, in
// case one was swapped in since it was checked.
func (w *walker) readDir(ctx context.Context, dir string) ([]fs.DirEntry, error) {
	f, err := files.OpenNoFollow(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot list %s: %w", quote(dir), unreadableReason(err))
	}
	defer f.Close()
	var all []fs.DirEntry
	for {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		if w.budget <= 0 || w.overtime() {
			return all, errBudget
		}
		chunk, err := f.ReadDir(min(readDirChunk, w.budget))
		w.budget -= len(chunk)
		all = append(all, chunk...)
		if errors.Is(err, io.EOF) || (err == nil && len(chunk) == 0) {
			return all, nil
		}
		if err != nil {
			return nil, fmt.Errorf("cannot list %s: %w", quote(dir), unreadableReason(err))
		}
	}
}

func kindOf(m fs.FileMode) entryKind {
	switch {
	case m.IsDir():
		return kindDir
	case m&fs.ModeSymlink != 0:
		return kindSymlink
	case m.IsRegular():
		return kindFile
	default:
		return kindOther
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// unreadableReason keeps the sentinel of a listing failure but not the OS
// text, which names the resolved path.
func unreadableReason(err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied: %w", files.ErrFileUnreadable)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("it no longer exists: %w", files.ErrFileUnreadable)
	}
	return fmt.Errorf("it cannot be read: %w", files.ErrFileUnreadable)
}

func quote(p string) string { return fmt.Sprintf("%q", p) }
