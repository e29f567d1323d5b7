package plugin

import (
	"fmt"
	"os"
	"strings"
)

// Dotenv parsing as VCP does it (dotenv's parse, patched by VCPToolBox so
// keys may contain @#%&^+-):
//   - KEY=VALUE or KEY: VALUE, optionally after "export ";
//   - unquoted values end at "#" (an inline comment) and are trimmed;
//   - '…', "…" and `…` values are taken as written and may span lines;
//     inside "…", the two-character sequences \n and \r become a newline and
//     a carriage return (nothing else is unescaped);
//   - a later assignment of a key wins;
//   - a line whose first non-blank character is "#" is a comment (the
//     patched parser would read "#KEY=v" as a key; a commented-out line is
//     far more likely to mean "off").
//
// Lines that are not assignments are skipped and reported by line number
// only, so a value never reaches a log.

// dotenv is a parsed env file: values by key and what was skipped.
type dotenv struct {
	values  map[string]string
	skipped []int // 1-based line numbers of lines that are not assignments
}

// readDotenv parses the file at path; a missing file is not an error when
// optional is set.
func readDotenv(path string, optional bool) (dotenv, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if optional && os.IsNotExist(err) {
			return dotenv{}, nil
		}
		return dotenv{}, fmt.Errorf("read env file: %w", err)
	}
	return parseDotenv(string(data)), nil
}

// skippedText names the skipped lines of the file at path, or "".
func (d dotenv) skippedText(path string) string {
	if len(d.skipped) == 0 {
		return ""
	}
	nums := make([]string, 0, len(d.skipped))
	for _, n := range d.skipped {
		nums = append(nums, fmt.Sprint(n))
	}
	return fmt.Sprintf("%s: line %s: not KEY=VALUE; ignored", path, strings.Join(nums, ", "))
}

// parseDotenv parses src; it never fails, see the rules above.
func parseDotenv(src string) dotenv {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	d := dotenv{values: make(map[string]string)}
	line := 1
	for len(src) > 0 {
		start := line
		key, value, ok, consumed := parseAssignment(src)
		line += strings.Count(src[:consumed], "\n")
		src = src[consumed:]
		if ok {
			d.values[key] = value
		} else if !blankOrComment(key) {
			d.skipped = append(d.skipped, start)
		}
	}
	return d
}

// blankOrComment reports whether a skipped line's text needs no warning.
func blankOrComment(text string) bool {
	t := strings.TrimSpace(text)
	return t == "" || strings.HasPrefix(t, "#")
}

// parseAssignment reads one assignment from the start of src. It returns the
// key and value, whether it was an assignment, and how many bytes it used
// (through the end of the last line it spans, newline included). When ok is
// false, key holds the line's text, for blankOrComment.
func parseAssignment(src string) (key, value string, ok bool, consumed int) {
	lineEnd := strings.IndexByte(src, '\n')
	if lineEnd < 0 {
		lineEnd = len(src)
	}
	next := min(lineEnd+1, len(src))
	first := src[:lineEnd]

	i := skipBlanks(first, 0)
	if i < len(first) && first[i] == '#' {
		return first, "", false, next
	}
	if strings.HasPrefix(first[i:], "export") {
		if j := i + len("export"); j < len(first) && (first[j] == ' ' || first[j] == '\t') {
			i = skipBlanks(first, j)
		}
	}
	k := i
	for k < len(first) && isDotenvKeyByte(first[k]) {
		k++
	}
	if k == i {
		return first, "", false, next
	}
	key = first[i:k]
	i = skipBlanks(first, k)
	switch {
	case i < len(first) && first[i] == '=':
		i++
	case i+1 < len(first) && first[i] == ':' && (first[i+1] == ' ' || first[i+1] == '\t'):
		i++
	default:
		return first, "", false, next
	}
	i = skipBlanks(first, i)

	if i < len(first) && (first[i] == '\'' || first[i] == '"' || first[i] == '`') {
		if v, used, good := quotedValue(src[i:], first[i]); good {
			return key, v, true, i + used
		}
	}
	// Unquoted (or a quote that does not close cleanly): up to an inline
	// comment on this line, trimmed, with matching outer quotes removed.
	v := first[i:]
	if c := strings.IndexByte(v, '#'); c >= 0 {
		v = v[:c]
	}
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"' || v[0] == '`') && v[len(v)-1] == v[0] {
		q := v[0]
		v = v[1 : len(v)-1]
		if q == '"' {
			v = expandNewlines(v)
		}
	}
	return key, v, true, next
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// quotedValue reads a value opened by quote at the start of s, possibly over
// several lines. It succeeds only when the closing quote is followed by
// nothing but blanks and an optional comment up to the end of its line.
// used counts through that line's newline.
func quotedValue(s string, quote byte) (value string, used int, ok bool) {
	i := 1
	for i < len(s) {
		c := s[i]
		if c == '\\' && i+1 < len(s) && s[i+1] == quote {
			i += 2 // an escaped quote stays as written
			continue
		}
		if c == quote {
			break
		}
		i++
	}
	if i >= len(s) {
		return "", 0, false
	}
	inner := s[1:i]
	rest := s[i+1:]
	end := strings.IndexByte(rest, '\n')
	tail := rest
	if end >= 0 {
		tail = rest[:end]
	}
	t := strings.TrimLeft(tail, " \t")
	if t != "" && t[0] != '#' {
		return "", 0, false
	}
	used = i + 1 + len(tail)
	if end >= 0 {
		used++
	}
	if quote == '"' {
		inner = expandNewlines(inner)
	}
	return inner, used, true
}

func expandNewlines(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	s = strings.ReplaceAll(s, `\n`, "\n")
	return strings.ReplaceAll(s, `\r`, "\r")
}

// isDotenvKeyByte: letters, digits, "_", ".", "-" and the patched set @#%&^+.
func isDotenvKeyByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("_.-@#%&^+", c) >= 0
}
