// Package doccheck reads the project's Markdown documents for the tests
// that hold every snippet to the code: the fenced blocks with their
// language and the markers above them, and the commands of shell blocks
// and of "$ " lines in transcripts. It checks nothing itself; the tests
// that know the config and the command tree do (cmd/vcpnode).
package doccheck

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Languages every fenced block must be marked with, so that none is left
// unchecked by accident: sh (commands, checked), console (a transcript:
// its "$ " lines are commands, the rest output), toml (a config snippet,
// parsed), json (parsed), text (output or prose, not checked), xml (a
// model's reply; the text protocol's example tests read those they mark).
var Languages = []string{"sh", "console", "toml", "json", "text", "xml"}

// Block is one fenced block of a document.
type Block struct {
	File string // the document, as given to Blocks
	Line int    // the opening fence's line, from 1
	Lang string // the info string's first word
	Text string // the lines between the fences, their indentation removed
	// Markers are the HTML comments on the lines right above the fence.
	Markers []string
}

// Where is "file:line", for messages.
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// Marked reports whether a marker above the block starts with
// "<!-- "+name.
func (b Block) Marked(name string) bool {
	return slices.ContainsFunc(b.Markers, func(m string) bool { return strings.HasPrefix(m, "<!-- "+name) })
}

// Documents returns README.md and every Markdown file under docs/ of the
// repository at root, except those under the folders in skip (paths
// relative to root, slash-separated).
func Documents(root string, skip ...string) ([]string, error) {
	docs := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && slices.Contains(skip, filepath.ToSlash(rel)) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			docs = append(docs, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("documents: %w", err)
	}
	return docs, nil
}

// Blocks returns the fenced blocks of the Markdown file at path. A fence
// may be indented (inside a list item); the block's lines lose that
// indentation. An unclosed fence is an error.
func Blocks(path string) ([]Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("blocks: %w", err)
	}
	var (
		blocks  []Block
		open    *Block
		indent  string
		body    []string
		markers []string
	)
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if open != nil {
			if strings.TrimSpace(line) == "```" {
				open.Text = strings.Join(body, "\n") + "\n"
				blocks = append(blocks, *open)
				open, body = nil, nil
				continue
			}
			body = append(body, strings.TrimPrefix(line, indent))
			continue
		}
		switch {
		case strings.HasPrefix(trimmed, "```"):
			lang, _, _ := strings.Cut(strings.TrimPrefix(trimmed, "```"), " ")
			open = &Block{File: path, Line: n, Lang: lang, Markers: markers}
			indent = line[:len(line)-len(trimmed)]
			markers = nil
		case strings.HasPrefix(trimmed, "<!--"):
			markers = append(markers, strings.TrimSpace(trimmed))
		default:
			markers = nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("blocks: %s: %w", path, err)
	}
	if open != nil {
		return nil, fmt.Errorf("blocks: %s: the block opened at line %d never closes", path, open.Line)
	}
	return blocks, nil
}

// Command is one simple command of a snippet.
type Command struct {
	Line int // within the snippet, from 1
	// Args are the command's words with quotes removed; a word that is not
	// literal (a $VAR, a $(…)) is Unknown. sudo and its options, and
	// variable assignments before the command, are left out.
	Args []string
}

// Unknown stands for a word whose value only a shell would know.
const Unknown = "\x00unknown"

// Commands returns every simple command of a shell snippet, those inside
// pipelines, lists and command substitutions included, in order.
func Commands(script string) ([]Command, error) {
	f, err := syntax.NewParser(syntax.KeepComments(false)).Parse(strings.NewReader(script), "")
	if err != nil {
		return nil, fmt.Errorf("commands: %w", err)
	}
	var cmds []Command
	syntax.Walk(f, func(node syntax.Node) bool {
		call, ok := node.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		var args []string
		for _, w := range call.Args {
			args = append(args, literal(w))
		}
		for len(args) > 0 && args[0] == "sudo" {
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				args = args[1:]
			}
		}
		if len(args) > 0 {
			cmds = append(cmds, Command{Line: int(call.Pos().Line()), Args: args})
		}
		return true
	})
	return cmds, nil
}

// Transcript returns the commands of the "$ " lines of a console block,
// with their line in the block.
func Transcript(text string) ([]Command, error) {
	var cmds []Command
	for i, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimLeft(line, " "), "$ ")
		if !ok {
			continue
		}
		cs, err := Commands(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		for _, c := range cs {
			c.Line = i + 1
			cmds = append(cmds, c)
		}
	}
	return cmds, nil
}

// literal is w without its quotes, or Unknown when a shell would have to
// expand it.
func literal(w *syntax.Word) string {
	var b strings.Builder
	if !appendParts(&b, w.Parts) {
		return Unknown
	}
	return b.String()
}

func appendParts(b *strings.Builder, parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if !appendParts(b, p.Parts) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
