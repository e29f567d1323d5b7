// Package gendocs writes the reference of a cobra command tree: one
// Markdown page per command, man pages and shell completion scripts. The
// pages are generated, never edited: cmd/vcpnode's TestCommandDocsAreCurrent
// fails when docs/commands no longer matches the tree.
package gendocs

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Markdown writes one page per command into dir (root.Name()+".md" is the
// first), without the generation date cobra adds by default, so that the
// same tree always gives the same bytes.
func Markdown(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("markdown: %w", err)
	}
	// Pages of commands that are gone must not linger.
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return fmt.Errorf("markdown: %w", err)
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("markdown: %w", err)
		}
	}
	prepare(root)
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("markdown: %w", err)
	}
	return nil
}

// Man writes a section 1 man page per command into dir, dated date (a
// release passes its commit's date, so that a rebuild gives the same pages).
func Man(root *cobra.Command, dir, source string, date time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	prepare(root)
	header := &doc.GenManHeader{Title: "VCPNODE", Section: "1", Date: &date, Source: source, Manual: "vcpnode manual"}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

// Completions writes the bash, zsh and fish completion scripts into dir,
// named as those shells' completion directories expect (bash: NAME, zsh:
// _NAME, fish: NAME.fish).
func Completions(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("completions: %w", err)
	}
	name := root.Name()
	for file, gen := range map[string]func(string) error{
		name:           func(p string) error { return root.GenBashCompletionFileV2(p, true) },
		"_" + name:     root.GenZshCompletionFile,
		name + ".fish": func(p string) error { return root.GenFishCompletionFile(p, true) },
	} {
		if err := gen(filepath.Join(dir, file)); err != nil {
			return fmt.Errorf("completions: %s: %w", file, err)
		}
	}
	return nil
}

// prepare makes the tree what a user meets: cobra adds its completion
// command only when it executes, and would stamp each page with today.
func prepare(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	root.DisableAutoGenTag = true
}
