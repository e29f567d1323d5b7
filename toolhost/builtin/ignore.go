package builtin

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/vcpnode/vcpnode/toolhost/files"
)

// maxIgnoreFileBytes bounds one .gitignore; real ones are a few KiB.
const maxIgnoreFileBytes = 256 << 10

// ignoreRules are the .gitignore patterns in force in one directory: those
// of every directory from the root down, outermost first, because go-git's
// matcher gives the last matching pattern the final say, as git does.
type ignoreRules []gitignore.Pattern

// ignored reports whether the entry at path (components below the root) is
// excluded. An empty rule set matches nothing.
func (r ignoreRules) ignored(path []string, isDir bool) bool {
	if len(r) == 0 {
		return false
	}
	for i := len(r) - 1; i >= 0; i-- {
		if m := r[i].Match(path, isDir); m != gitignore.NoMatch {
			return m == gitignore.Exclude
		}
	}
	return false
}

// with returns r plus the patterns of dir's .gitignore (dir's components
// below the root are domain). r itself is never changed, so siblings can
// share their parent's rules. A .gitignore that is not a regular file (a
// symlink, perhaps out of the root) or cannot be read adds nothing.
func (r ignoreRules) with(dir string, domain []string) ignoreRules {
	return r.parse(readIgnoreFile(filepath.Join(dir, ".gitignore")), domain)
}

// parse returns r plus the patterns in data, the text of a .gitignore in the
// directory domain (components below the root).
func (r ignoreRules) parse(data []byte, domain []string) ignoreRules {
	if len(data) == 0 {
		return r
	}
	out := slices.Clip(r)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFileBytes)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, gitignore.ParsePattern(line, domain))
	}
	return out
}

func readIgnoreFile(p string) []byte {
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxIgnoreFileBytes {
		return nil
	}
	f, err := files.OpenNoFollow(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFileBytes))
	if err != nil {
		return nil
	}
	return data
}

// ancestorRules loads the .gitignore files of root and every directory
// between it and dir (dir's own is loaded when dir is listed), so a walk that
// starts below the root honours the rules above it, as git does.
func ancestorRules(ctx context.Context, root, dir string) (ignoreRules, error) {
	var rules ignoreRules
	parts := rel(root, dir)
	cur := root
	for i := range parts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rules = rules.with(cur, parts[:i])
		cur = filepath.Join(cur, parts[i])
	}
	return rules, nil
}
