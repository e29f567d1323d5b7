package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

const (
	defaultSearchMatches = 100
	maxSearchMatches     = 1000
	// searchByteBudget bounds the bytes one search reads in all.
	searchByteBudget int64 = 128 << 20
	// maxSearchFileBytes skips files too big to be source or notes.
	maxSearchFileBytes = 8 << 20
	// searchScanBudget bounds the directory entries one search examines.
	searchScanBudget = 200_000
	// maxMatchText cuts a matching line in the answer.
	maxMatchText = 300
)

type searchTool struct {
	access *files.Access
	budget int              // 0 = searchScanBudget; tests lower it
	bytes  int64            // 0 = searchByteBudget; tests lower it
	now    func() time.Time // tests replace the clock, see walker.now
	onDir  func(dir string) // test hook, see walker.onDir
}

func (t *searchTool) Spec() toolhost.Spec {
	return spec(SearchFilesName, "Search files",
		"Searches the text files under a directory of this node for a regular expression (RE2 syntax) and answers path:line: text for each matching line, leaving out what .gitignore files exclude, hidden entries and dependency folders.",
		[]schema.Param{
			{Name: "pattern", Type: schema.TypeString, Required: true, Description: "RE2 regular expression matched against each line, e.g. func \\w+Handler or TODO|FIXME."},
			{Name: "path", Type: schema.TypeString, Description: "Directory (or one file) to search: an absolute path or file:// URL, or a path relative to this node's file roots. Empty searches every root."},
			{Name: "include", Type: schema.TypeString, Description: "Only search files whose name matches this glob, e.g. *.go or *.md."},
			{Name: "ignoreCase", Type: schema.TypeBoolean, Default: jsonFalse, Description: "Match letters regardless of case."},
			{Name: "showHidden", Type: schema.TypeBoolean, Default: jsonFalse, Description: "Also search dot entries and dependency folders (node_modules, vendor…)."},
			{Name: "filterMode", Type: schema.TypeString, Default: jsonStr("gitignore"), Enum: []json.RawMessage{jsonStr("gitignore"), jsonStr("none")}, Description: "gitignore skips what the .gitignore files at every level exclude; none searches it too."},
			{Name: "maxMatches", Type: schema.TypeInteger, Default: jsonNum(defaultSearchMatches), Description: fmt.Sprintf("Most matching lines to return, 1 to %d; the answer says when it was cut short.", maxSearchMatches)},
		})
}

type searchArgs struct {
	re, pre    *regexp.Regexp // pre finds candidate files on the whole text
	path       string
	include    string
	maxMatches int
	showHidden bool
	gitignore  bool
}

func parseSearchArgs(args map[string]json.RawMessage) (searchArgs, error) {
	var a searchArgs
	l := argList{args: args}
	pattern, err := argString(args, "pattern")
	l.add(err)
	ignoreCase, err := argBool(args, "ignoreCase", false)
	l.add(err)
	if err == nil && pattern == "" {
		l.add(fmt.Errorf("%w: pattern is required: an RE2 regular expression", ErrBadArgument))
	} else if pattern != "" {
		flags := ""
		if ignoreCase {
			flags = "(?i)"
		}
		if a.re, err = regexp.Compile(flags + pattern); err != nil {
			l.add(fmt.Errorf("%w: pattern is not a valid RE2 regular expression: %w", ErrBadArgument, err))
		} else if !strings.Contains(pattern, `\A`) && !strings.Contains(pattern, `\z`) && !strings.Contains(pattern, "(?") {
			// With (?m), ^ and $ match at line ends in the whole text, so a
			// file with no match there has no matching line. Patterns that
			// could differ (\A, \z, their own flags) go line by line.
			a.pre = regexp.MustCompile("(?m)" + flags + pattern)
		}
	}
	a.path = l.string("path")
	a.include = l.string("include")
	if _, err := filepath.Match(a.include, ""); err != nil {
		l.add(fmt.Errorf("%w: include %q is not a valid glob", ErrBadArgument, clip(a.include)))
	}
	a.maxMatches = l.int("maxMatches", defaultSearchMatches, 1, maxSearchMatches)
	a.showHidden = l.bool("showHidden", false)
	a.gitignore = l.filterMode()
	return a, l.err()
}

func (t *searchTool) Invoke(ctx context.Context, call toolhost.Call) (any, error) {
	a, err := parseSearchArgs(call.Args)
	if err != nil {
		return nil, err
	}
	bytesLeft := searchByteBudget
	if t.bytes > 0 {
		bytesLeft = t.bytes
	}
	limit := cmpOr(t.budget, searchScanBudget)
	s := &search{args: a, bytesLeft: bytesLeft, walker: walker{
		access: t.access, gitignore: a.gitignore, showHidden: a.showHidden,
		budget: limit, limit: limit, stopAt: softDeadline(ctx), now: t.now, onDir: t.onDir,
	}}
	targets, err := walkTargets(t.access, a.path)
	if err != nil {
		return nil, err
	}
	for _, tg := range targets {
		if err := s.target(ctx, tg); err != nil {
			if errors.Is(err, errSearchFull) {
				break
			}
			if ctx.Err() != nil {
				return nil, fmt.Errorf("search of %s stopped: %w", quote(tg.requested), context.Cause(ctx))
			}
			return nil, err
		}
	}
	return s.answer(targets), nil
}

var errSearchFull = errors.New("search full")

type search struct {
	args      searchArgs
	walker    walker
	bytesLeft int64
	buf       []byte

	out                      strings.Builder
	matches, matchedFiles    int
	files                    int
	read                     int64
	binary, large, withheld  int
	ignored, hidden, special int
	truncated                string
}

// target searches one file or directory tree.
func (s *search) target(ctx context.Context, tg target) error {
	s.walker.root = tg.root
	info, err := os.Lstat(tg.resolved)
	if err != nil {
		return files.Unreadable(tg.requested, err)
	}
	if !info.IsDir() {
		if !info.Mode().IsRegular() {
			return files.Refusal(files.ErrNotRegularFile, tg.requested, "it is not a regular file or a directory")
		}
		return s.file(ctx, tg.resolved, tg.requested)
	}
	var rules ignoreRules
	if s.args.gitignore {
		if rules, err = ancestorRules(ctx, tg.root, tg.resolved); err != nil {
			return err
		}
	}
	return s.dir(ctx, tg.resolved, rules)
}

func (s *search) dir(ctx context.Context, dir string, rules ignoreRules) error {
	l, inner, err := s.walker.list(ctx, dir, rel(s.walker.root, dir), rules)
	s.ignored += l.ignored
	s.hidden += l.hidden
	s.withheld += l.withheld
	budgetOut := errors.Is(err, errBudget)
	if err != nil && !budgetOut {
		if ctx.Err() != nil {
			return err
		}
		// An unreadable folder is skipped, not fatal.
		s.special++
		return nil
	}
	for _, e := range l.entries {
		p := filepath.Join(dir, e.name)
		switch {
		case e.kind == kindDir && !e.vendor:
			if err := s.dir(ctx, p, inner); err != nil {
				return err
			}
		case e.kind == kindFile:
			if s.args.include != "" {
				if ok, _ := filepath.Match(s.args.include, e.name); !ok {
					continue
				}
			}
			if err := s.file(ctx, p, p); err != nil {
				return err
			}
		}
	}
	if budgetOut {
		s.truncated = s.walker.truncation("search a subdirectory to cover the rest")
		return errSearchFull
	}
	return nil
}

// file searches one regular file (resolved, inside the root; name is how
// it is shown). Unreadable, binary, oversized and secret files are counted
// and skipped.
func (s *search) file(ctx context.Context, resolved, name string) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	if s.walker.overtime() {
		s.truncated = s.walker.truncation("search a subdirectory or use include to cover the rest")
		return errSearchFull
	}
	f, err := files.OpenNoFollow(resolved)
	if err != nil {
		s.special++
		return nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		s.special++
		return nil
	}
	if info.Size() > maxSearchFileBytes {
		s.large++
		return nil
	}
	if info.Size() > s.bytesLeft {
		s.truncated = fmt.Sprintf("read %d bytes, the limit of one call; search a subdirectory or use include to cover the rest", s.read)
		return errSearchFull
	}
	s.buf = s.buf[:0]
	if cap(s.buf) < int(info.Size())+1 {
		s.buf = make([]byte, 0, int(info.Size())+512)
	}
	data, err := readAllInto(s.buf, io.LimitReader(f, min(maxSearchFileBytes, s.bytesLeft)))
	s.buf = data[:0]
	s.read += int64(len(data))
	s.bytesLeft -= int64(len(data))
	if err != nil {
		s.special++
		return nil
	}
	s.files++
	if bytes.IndexByte(data[:min(len(data), sniffBytes)], 0) >= 0 {
		s.binary++
		return nil
	}
	if s.args.pre != nil && !s.args.pre.Match(data) {
		return nil
	}
	if files.HasPrivateKeyBlock(data) {
		s.withheld++
		return nil
	}
	found := false
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if !s.args.re.Match(line) {
			continue
		}
		if s.matches >= s.args.maxMatches {
			s.truncated = fmt.Sprintf("reached maxMatches=%d; narrow the pattern or the path, or raise maxMatches, to see the rest", s.args.maxMatches)
			return errSearchFull
		}
		if !found {
			found = true
			s.matchedFiles++
		}
		s.matches++
		text := strings.ToValidUTF8(string(bytes.TrimSuffix(line, []byte("\r"))), "\uFFFD")
		if len(text) > maxMatchText {
			text = strings.ToValidUTF8(text[:maxMatchText], "") + " …"
		}
		fmt.Fprintf(&s.out, "%s:%d: %s\n", name, n, text)
	}
	return nil
}

// readAllInto reads r to the end, appending to buf.
func readAllInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func (s *search) answer(targets []target) string {
	var b strings.Builder
	where := "every root"
	if len(targets) == 1 {
		where = targets[0].requested
	}
	if s.matches == 0 {
		fmt.Fprintf(&b, "no line matches /%s/ in %s under %s\n", s.args.re, plural(s.files, "file", "files"), where)
	} else {
		b.WriteString(s.out.String())
		fmt.Fprintf(&b, "\n%s in %s (searched %s, %d bytes, under %s)\n",
			plural(s.matches, "match", "matches"), plural(s.matchedFiles, "file", "files"), plural(s.files, "file", "files"), s.read, where)
	}
	var skipped []string
	for _, c := range []struct {
		n    int
		what string
	}{
		{s.binary, "binary"},
		{s.large, fmt.Sprintf("over %d MiB", maxSearchFileBytes>>20)},
		{s.special, "unreadable"},
		{s.withheld, "withheld as secret"},
		{s.ignored, "ignored by .gitignore"},
		{s.hidden, "hidden"},
	} {
		if c.n > 0 {
			skipped = append(skipped, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(skipped) > 0 {
		b.WriteString("skipped: " + strings.Join(skipped, ", ") + "\n")
	}
	if s.truncated != "" {
		fmt.Fprintf(&b, "[truncated: %s]\n", s.truncated)
	}
	return b.String()
}
