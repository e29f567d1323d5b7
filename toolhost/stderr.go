package toolhost

import (
	"bytes"
	"regexp"
	"strings"
	"unicode"

	"github.com/vcpnode/vcpnode/internal/humantext"
)

// StderrSummary keeps, in bounded memory, what a process said on stderr
// that explains its failure: the first line that reads like an error and
// the last few lines. Stack traces put the useful line first (Node.js) or
// last (Python), and tools end with lines that say nothing ("Node.js
// v20.20.2", "npm error A complete log of this run…"), so neither the head
// nor the last line alone will do. It is the one summary stdio plugins,
// direct plugin hosts and MCP servers quote in their errors. The zero value
// is ready; it is not safe for concurrent use.
type StderrSummary struct {
	strong, weak summaryLine   // the first exception-like line, the first error-ish one
	last         []summaryLine // the last telling lines, oldest first
	seq          int
	partial      []byte // a line not yet ended
}

type summaryLine struct {
	seq  int
	text string
}

const (
	// stderrSummaryLines is how many last lines a summary keeps.
	stderrSummaryLines = 3
	// stderrSummaryLineBytes is how much of one line a summary keeps.
	stderrSummaryLineBytes = 240
	// stderrPartialMax bounds an unterminated line held between writes.
	stderrPartialMax = 4 << 10
)

var (
	// An exception or error object: "TypeError: …", "Error [ERR_X]: …",
	// "npm error Error: EACCES…", "PermissionError: [Errno 13] …".
	strongErrorLine = regexp.MustCompile(`(^|[\s:(])([A-Za-z_$][\w$.]*)?(Error|Exception)(\s*\[[A-Z0-9_]+\])?:`)
	// A line a tool marks as an error: "npm error …", "error: …", "fatal: …".
	weakErrorLine = regexp.MustCompile(`^(?i:npm (error|ERR!)|error\b|fatal\b|panic:|E\d{3,}\b)`)
	// npm's first error line only names the code; the next one says what failed.
	npmCodeLine = regexp.MustCompile(`^npm (error|ERR!) code\b`)
	// Stack frames tell where, not what, and Node.js ends a crash with its
	// version: left out of the last lines.
	stackFrame = regexp.MustCompile(`^(at\s|File\s+"|\.\.\. \d+ (more|lines)|Node\.js v\d+\.\d+\.\d+$)`)
)

// SummarizeStderr is the summary of b, a process's whole stderr (or its start).
func SummarizeStderr(b []byte) string {
	var s StderrSummary
	_, _ = s.Write(b)
	return s.String()
}

// Write adds output, split into lines; it never fails.
func (s *StderrSummary) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if room := stderrPartialMax - len(s.partial); room > 0 {
				s.partial = append(s.partial, p[:min(room, len(p))]...)
			}
			break
		}
		if len(s.partial) > 0 {
			if room := stderrPartialMax - len(s.partial); room > 0 {
				s.partial = append(s.partial, p[:min(room, i)]...)
			}
			s.Line(string(s.partial))
			s.partial = s.partial[:0]
		} else {
			s.Line(string(p[:i]))
		}
		p = p[i+1:]
	}
	return n, nil
}

// Line adds one line of output.
func (s *StderrSummary) Line(line string) {
	text := humantext.Clip(strings.TrimSpace(strings.ToValidUTF8(line, "\uFFFD")), stderrSummaryLineBytes)
	if !telling(text) {
		return
	}
	s.seq++
	l := summaryLine{seq: s.seq, text: text}
	switch {
	case s.strong.text == "" && strongErrorLine.MatchString(text):
		s.strong = l
	case s.weak.text == "" && weakErrorLine.MatchString(text) && !npmCodeLine.MatchString(text):
		s.weak = l
	}
	if stackFrame.MatchString(text) {
		return
	}
	if len(s.last) == stderrSummaryLines {
		copy(s.last, s.last[1:])
		s.last = s.last[:stderrSummaryLines-1]
	}
	s.last = append(s.last, l)
}

// String is the summary on one line: the first error line, then the last
// lines (from the error line on, when it is one of them), joined by " | ",
// or " … " where lines were left out; "" when nothing telling was written.
func (s *StderrSummary) String() string {
	c := *s
	c.last = append([]summaryLine(nil), s.last...)
	if len(c.partial) > 0 {
		c.partial = nil
		c.Line(string(s.partial))
	}
	head := c.strong
	if head.text == "" {
		head = c.weak
	}
	if head.text == "" {
		return join(c.last)
	}
	lines := []summaryLine{head}
	for i, l := range c.last {
		if l.seq == head.seq {
			return join(c.last[i:])
		}
		if l.seq > head.seq {
			lines = append(lines, l)
		}
	}
	return join(lines)
}

// join writes lines with " | ", or " … " where lines were left out between two.
func join(lines []summaryLine) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			if l.seq != lines[i-1].seq+1 {
				b.WriteString(" … ")
			} else {
				b.WriteString(" | ")
			}
		}
		b.WriteString(l.text)
	}
	return b.String()
}

// telling reports whether a line holds a letter or a digit besides npm's
// prefix: "^^^^", "}", a bare "npm error" and blank lines say nothing.
func telling(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "npm error"), "npm ERR!")
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}
