package doccheck

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Link is a relative Markdown link of a document: [text](Target).
type Link struct {
	Line   int
	Target string // the path, relative to the document ("" for the document itself)
	Anchor string // after '#', "" when none
}

var linkPattern = regexp.MustCompile(`\]\(([^()\s]*)\)`)

// Links returns the relative links of the Markdown file at path, outside
// fenced blocks and inline code; links with a scheme (https:, mailto:) are
// left out.
func Links(path string) ([]Link, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("links: %w", err)
	}
	var links []Link
	fenced := false
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkPattern.FindAllStringSubmatch(withoutCode(line), -1) {
			target := m[1]
			if strings.Contains(target, ":") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			links = append(links, Link{Line: i + 1, Target: file, Anchor: anchor})
		}
	}
	return links, nil
}

// withoutCode blanks the `inline code` of a line.
func withoutCode(line string) string {
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		parts[i] = ""
	}
	return strings.Join(parts, "`")
}

// Anchors returns the anchors GitHub makes for the headings of the
// Markdown file at path: lower case, punctuation dropped, spaces as '-'.
func Anchors(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("anchors: %w", err)
	}
	anchors := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors, nil
}
