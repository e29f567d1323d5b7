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

	"github.com/vcpnode/vcpnode/toolhost/files"
)

// maxIgnoreFileBytes bounds one .gitignore; real ones are a few KiB.
const maxIgnoreFileBytes = 256 << 10

// ignoreRules are the .gitignore patterns in force in one directory: those
// of every directory from the root down, outermost first, because the last
// pattern that matches has the final say, as in git.
type ignoreRules []ignorePattern

// ignorePattern is one line of a .gitignore, parsed as git parses it.
type ignorePattern struct {
	domain  []string // the .gitignore's directory: components below the root
	glob    string   // wildmatch pattern, without '!', the leading and the trailing '/'
	negate  bool     // "!glob": a match includes the entry again
	dirOnly bool     // "glob/": matches directories only
	// inPath: the pattern has a '/' before its end, so it matches the path
	// below domain; without one it matches the entry's name at any depth.
	inPath bool
}

// ignored reports whether the entry at path (components below the root) is
// excluded. The caller does not look inside excluded directories, so, as in
// git, nothing below one can be included again. An empty rule set matches
// nothing.
func (r ignoreRules) ignored(path []string, isDir bool) bool {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i].match(path, isDir) {
			return !r[i].negate
		}
	}
	return false
}

func (p ignorePattern) match(path []string, isDir bool) bool {
	if len(path) <= len(p.domain) || (p.dirOnly && !isDir) {
		return false
	}
	for i, d := range p.domain {
		if path[i] != d {
			return false
		}
	}
	if !p.inPath {
		return wildmatch(p.glob, path[len(path)-1])
	}
	return wildmatch(p.glob, strings.Join(path[len(p.domain):], "/"))
}

// parseIgnoreLine parses one line of a .gitignore as git does; ok is false
// for a line that holds no pattern (blank, or a comment).
func parseIgnoreLine(line string, domain []string) (ignorePattern, bool) {
	line = trimTrailingSpaces(strings.TrimSuffix(line, "\r"))
	if line == "" || line[0] == '#' {
		return ignorePattern{}, false
	}
	p := ignorePattern{domain: domain}
	if line[0] == '!' {
		p.negate, line = true, line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly, line = true, line[:len(line)-1]
	}
	p.inPath = strings.Contains(line, "/")
	p.glob = strings.TrimPrefix(line, "/")
	return p, p.glob != ""
}

// trimTrailingSpaces drops the spaces at the end of a pattern, except one
// escaped with a backslash.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i == len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
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
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // git skips a UTF-8 byte order mark
	if len(data) == 0 {
		return r
	}
	domain = slices.Clone(domain) // the walker reuses its path slice
	out := slices.Clip(r)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFileBytes)
	for sc.Scan() {
		if p, ok := parseIgnoreLine(sc.Text(), domain); ok {
			out = append(out, p)
		}
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
