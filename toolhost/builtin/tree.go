package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

const (
	defaultTreeDepth   = 3
	maxTreeDepth       = 50
	defaultTreeEntries = 500
	maxTreeEntries     = 10000
	// treeScanBudget bounds the directory entries one call examines, shown
	// or not: 100,000 files in one folder still answer, and a whole disk
	// cannot keep the node busy.
	treeScanBudget = 200_000
)

type treeTool struct {
	access *files.Access
	budget int              // 0 = treeScanBudget; tests lower it
	now    func() time.Time // tests replace the clock, see walker.now
	onDir  func(dir string) // test hook, see walker.onDir
}

func jsonStr(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func jsonNum(n int) json.RawMessage { return json.RawMessage(fmt.Sprint(n)) }

var (
	jsonTrue  = json.RawMessage("true")
	jsonFalse = json.RawMessage("false")
)

func (t *treeTool) Spec() toolhost.Spec {
	return spec(DirectoryTreeName, "Directory tree",
		"Shows the folders and files under a directory of this node as an indented tree with counts, leaving out what .gitignore files exclude, hidden entries and dependency folders.",
		[]schema.Param{
			{Name: "path", Type: schema.TypeString, Description: "Directory to show: an absolute path or file:// URL, or a path relative to this node's file roots. Empty shows every root."},
			{Name: "maxDepth", Type: schema.TypeInteger, Default: jsonNum(defaultTreeDepth), Description: fmt.Sprintf("How many levels below path to list, 1 to %d; deeper folders show only their counts.", maxTreeDepth)},
			{Name: "showFiles", Type: schema.TypeBoolean, Default: jsonTrue, Description: "List files as well as folders; false lists folders only, still with file counts."},
			{Name: "showHidden", Type: schema.TypeBoolean, Default: jsonFalse, Description: "Also list dot entries (.git, .github…) and enter dependency folders (node_modules, vendor…)."},
			{Name: "filterMode", Type: schema.TypeString, Default: jsonStr("gitignore"), Enum: []json.RawMessage{jsonStr("gitignore"), jsonStr("none")}, Description: "gitignore leaves out what the .gitignore files at every level exclude; none lists it too."},
			{Name: "maxEntries", Type: schema.TypeInteger, Default: jsonNum(defaultTreeEntries), Description: fmt.Sprintf("Most lines of tree to return, 1 to %d; the answer says when it was cut short.", maxTreeEntries)},
		})
}

type treeArgs struct {
	path                  string
	maxDepth, maxEntries  int
	showFiles, showHidden bool
	gitignore             bool
}

func parseTreeArgs(args map[string]json.RawMessage) (treeArgs, error) {
	l := argList{args: args}
	a := treeArgs{
		path:       l.string("path"),
		maxDepth:   l.int("maxDepth", defaultTreeDepth, 1, maxTreeDepth),
		maxEntries: l.int("maxEntries", defaultTreeEntries, 1, maxTreeEntries),
		showFiles:  l.bool("showFiles", true),
		showHidden: l.bool("showHidden", false),
		gitignore:  l.filterMode(),
	}
	return a, l.err()
}

func (t *treeTool) Invoke(ctx context.Context, call toolhost.Call) (any, error) {
	a, err := parseTreeArgs(call.Args)
	if err != nil {
		return nil, err
	}
	targets, err := walkTargets(t.access, a.path)
	if err != nil {
		return nil, err
	}
	for _, tg := range targets {
		// A tree starts at a directory; the roots are, by construction.
		if err := requireDir(tg); err != nil {
			return nil, err
		}
	}
	limit := cmpOr(t.budget, treeScanBudget)
	r := &treeRender{args: a, walker: walker{
		access: t.access, gitignore: a.gitignore, showHidden: a.showHidden,
		budget: limit, limit: limit, stopAt: softDeadline(ctx), now: t.now, onDir: t.onDir,
	}}
	for i, tg := range targets {
		if i > 0 {
			r.b.WriteString("\n")
		}
		if err := r.tree(ctx, tg); err != nil {
			if errors.Is(err, errTreeFull) {
				break
			}
			return nil, err
		}
	}
	r.summary()
	return r.b.String(), nil
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// errTreeFull ends a tree walk that hit maxEntries or the scan budget.
var errTreeFull = errors.New("tree full")

type treeRender struct {
	args   treeArgs
	walker walker
	b      strings.Builder

	lines       int
	dirs, files int // listed
	ignored     int
	hidden      int
	withheld    int
	truncated   string
}

// tree writes one target: its header line and its subtree.
func (r *treeRender) tree(ctx context.Context, tg target) error {
	r.walker.root = tg.root
	var rules ignoreRules
	if r.args.gitignore {
		var err error
		if rules, err = ancestorRules(ctx, tg.root, tg.resolved); err != nil {
			return fmt.Errorf("directory tree of %s stopped: %w", quote(tg.requested), context.Cause(ctx))
		}
	}
	l, inner, err := r.list(ctx, tg.resolved, rules)
	if err != nil && !errors.Is(err, errBudget) {
		return r.stopped(ctx, tg.requested, err)
	}
	fmt.Fprintf(&r.b, "%s/ %s\n", strings.TrimSuffix(tg.requested, "/"), counts(l, ""))
	if err != nil {
		return r.budgetFull()
	}
	return r.children(ctx, tg.resolved, inner, l, "", 1)
}

// budgetFull records that the scan budget or the time ran out.
func (r *treeRender) budgetFull() error {
	return r.full(r.walker.truncation("show a subdirectory to see the rest"))
}

// list lists dir and adds what it left out to the totals.
func (r *treeRender) list(ctx context.Context, dir string, rules ignoreRules) (listing, ignoreRules, error) {
	l, inner, err := r.walker.list(ctx, dir, rel(r.walker.root, dir), rules)
	r.ignored += l.ignored
	r.hidden += l.hidden
	r.withheld += l.withheld
	return l, inner, err
}

func (r *treeRender) stopped(ctx context.Context, requested string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("directory tree of %s stopped: %w", quote(requested), context.Cause(ctx))
	}
	return err
}

func (r *treeRender) full(reason string) error {
	r.truncated = reason
	return errTreeFull
}

// children writes l's entries below dir with the given line prefix.
func (r *treeRender) children(ctx context.Context, dir string, rules ignoreRules, l listing, prefix string, depth int) error {
	shown := l.entries
	if !r.args.showFiles {
		shown = shown[:l.dirs] // directories sort first
	}
	for i, e := range shown {
		if r.lines >= r.args.maxEntries {
			return r.full(fmt.Sprintf("reached maxEntries=%d; show a subdirectory, or raise maxEntries or lower maxDepth, to see the rest", r.args.maxEntries))
		}
		branch, more := "├── ", "│   "
		if i == len(shown)-1 {
			branch, more = "└── ", "    "
		}
		r.lines++
		r.b.WriteString(prefix + branch)
		switch e.kind {
		case kindFile:
			r.files++
			r.b.WriteString(e.name + "\n")
			continue
		case kindSymlink:
			r.files++
			r.b.WriteString(e.name + " (symlink, not followed)\n")
			continue
		case kindOther:
			r.files++
			r.b.WriteString(e.name + " (not a regular file)\n")
			continue
		}
		r.dirs++
		if e.vendor {
			r.b.WriteString(e.name + "/ (dependency folder, not listed)\n")
			continue
		}
		sub := filepath.Join(dir, e.name)
		sl, inner, err := r.list(ctx, sub, rules)
		switch {
		case errors.Is(err, errBudget):
			r.b.WriteString(e.name + "/\n")
			return r.budgetFull()
		case err != nil && ctx.Err() != nil:
			return r.stopped(ctx, sub, err)
		case err != nil:
			// One unreadable folder does not spoil the rest of the tree.
			r.b.WriteString(e.name + "/ (cannot be read)\n")
			continue
		}
		if depth >= r.args.maxDepth {
			r.b.WriteString(e.name + "/ " + counts(sl, "not expanded") + "\n")
			continue
		}
		r.b.WriteString(e.name + "/ " + counts(sl, "") + "\n")
		if err := r.children(ctx, sub, inner, sl, prefix+more, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// counts is a directory's "(2 dirs, 5 files)" with an optional note.
func counts(l listing, note string) string {
	var parts []string
	if l.dirs > 0 {
		parts = append(parts, plural(l.dirs, "dir", "dirs"))
	}
	if l.files > 0 {
		parts = append(parts, plural(l.files, "file", "files"))
	}
	if len(parts) == 0 {
		parts = append(parts, "empty")
	}
	s := strings.Join(parts, ", ")
	if note != "" && (l.dirs > 0 || l.files > 0) {
		s += "; " + note
	}
	return "(" + s + ")"
}

// summary writes the totals and, when the tree was cut short, says so.
func (r *treeRender) summary() {
	r.b.WriteString("\n")
	if r.args.showFiles {
		fmt.Fprintf(&r.b, "%s, %s listed", plural(r.dirs, "directory", "directories"), plural(r.files, "file", "files"))
	} else {
		fmt.Fprintf(&r.b, "%s listed (files counted, not listed)", plural(r.dirs, "directory", "directories"))
	}
	var left []string
	if r.ignored > 0 {
		left = append(left, fmt.Sprintf("%d ignored by .gitignore", r.ignored))
	}
	if r.hidden > 0 {
		left = append(left, fmt.Sprintf("%d hidden", r.hidden))
	}
	if r.withheld > 0 {
		left = append(left, fmt.Sprintf("%d withheld as secret", r.withheld))
	}
	if len(left) > 0 {
		r.b.WriteString("; left out: " + strings.Join(left, ", "))
	}
	r.b.WriteString("\n")
	if r.truncated != "" {
		fmt.Fprintf(&r.b, "[truncated: %s]\n", r.truncated)
	}
}
