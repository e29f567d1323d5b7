//go:build gendocs

// The documentation generator: the same command tree as the binary, built
// with -tags gendocs so that cobra/doc never links into vcpnode itself.
//
//	go run -tags gendocs ./cmd/vcpnode -markdown docs/commands
//	go run -tags gendocs ./cmd/vcpnode -man DIR -completions DIR -date 2026-11-24
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/vcpnode/vcpnode/internal/gendocs"
)

func main() {
	markdown := flag.String("markdown", "", "write the Markdown command reference into `DIR`")
	man := flag.String("man", "", "write man pages into `DIR`")
	completions := flag.String("completions", "", "write bash, zsh and fish completions into `DIR`")
	date := flag.String("date", "", "the man pages' `DATE` (YYYY-MM-DD or RFC 3339; default today)")
	source := flag.String("source", "vcpnode", "the man pages' source line, like \"vcpnode 1.2.0\"")
	flag.Parse()
	if err := generate(*markdown, *man, *completions, *date, *source); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func generate(markdown, man, completions, date, source string) error {
	if markdown == "" && man == "" && completions == "" {
		return fmt.Errorf("nothing to do: pass -markdown, -man or -completions")
	}
	day := time.Now().UTC()
	if date != "" {
		d, err := time.Parse(time.DateOnly, date)
		if err != nil {
			if d, err = time.Parse(time.RFC3339, date); err != nil {
				return fmt.Errorf("-date: %w", err)
			}
		}
		// A snapshot built without git history gets GoReleaser's zero
		// commit date: today reads better than year 1.
		if d.Year() > 1 {
			day = d
		}
	}
	if markdown != "" {
		if err := gendocs.Markdown(newRootCmd(docsApp()), markdown); err != nil {
			return err
		}
	}
	if man != "" {
		if err := gendocs.Man(newRootCmd(docsApp()), man, source, day); err != nil {
			return err
		}
	}
	if completions != "" {
		return gendocs.Completions(newRootCmd(docsApp()), completions)
	}
	return nil
}
