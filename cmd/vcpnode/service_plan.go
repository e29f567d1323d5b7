package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/vcpnode/vcpnode/config"
)

// A plan is what a `service` command does, as data: the same plan is
// printed by --dry-run and carried out otherwise, so what the dry run shows
// is exactly what would happen.
type plan []action

type actionKind int

const (
	actMkdir       actionKind = iota // make a directory (and parents) with mode
	actWrite                         // write content, replacing a different file
	actCreate                        // write content only if nothing is there
	actRun                           // run argv
	actRemove                        // remove a file; a missing one is fine
	actRemoveAll                     // remove a directory tree; a missing one is fine
	actRemoveEmpty                   // remove a directory if it is empty
	actNote                          // tell the operator something
)

type action struct {
	kind    actionKind
	path    string
	mode    fs.FileMode
	content []byte
	// summary replaces the content in the dry-run listing (a whole
	// config.example.toml would drown the rest).
	summary string
	argv    []string
	// tolerated: a failing command is reported and the plan goes on (e.g.
	// unloading a job that is not loaded).
	tolerated bool
	note      string
	// undo, for a command, is the command that takes it back when a later
	// step of an install fails (nil: nothing to take back).
	undo []string
}

func mkdirAction(path string, mode fs.FileMode) action {
	return action{kind: actMkdir, path: path, mode: mode}
}

func writeAction(path string, mode fs.FileMode, content []byte) action {
	return action{kind: actWrite, path: path, mode: mode, content: content}
}

func runAction(argv ...string) action { return action{kind: actRun, argv: argv} }

func tolerantRun(argv ...string) action { return action{kind: actRun, argv: argv, tolerated: true} }

func noteAction(format string, args ...any) action {
	return action{kind: actNote, note: fmt.Sprintf(format, args...)}
}

// commandRunner runs service-manager commands (systemctl, launchctl,
// systemd-sysusers); tests replace it.
type commandRunner interface {
	// Run runs argv with its output on out and returns its error,
	// *exec.ExitError when it ran and failed.
	Run(ctx context.Context, out io.Writer, argv []string) error
}

// execRunner runs commands for real.
type execRunner struct{}

func (execRunner) Run(ctx context.Context, out io.Writer, argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("%s is not installed or not on PATH: %w", argv[0], err)
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}

// planRunner carries out or prints a plan. fsRoot prefixes every path it
// touches (tests point it at a temporary directory); the paths it prints and
// writes into files are the ones given.
type planRunner struct {
	out      io.Writer
	commands commandRunner
	fsRoot   string
	dryRun   bool
	header   string // a line said before the plan runs, if any
	// undoOnFailure takes back the steps done when one fails, newest
	// first, so that a failed install leaves the machine as it was.
	undoOnFailure bool
	undo          []undoStep
}

// undoStep takes back one thing a step did.
type undoStep struct {
	what string // for the output: "remove /etc/…"
	do   func(ctx context.Context) error
}

func (r *planRunner) path(p string) string {
	if r.fsRoot == "" {
		return p
	}
	return filepath.Join(r.fsRoot, p)
}

func (r *planRunner) execute(ctx context.Context, p plan) error {
	if r.dryRun {
		fmt.Fprintln(r.out, "dry run: nothing is changed; this is what would be done")
	}
	if r.header != "" {
		fmt.Fprintln(r.out, r.header)
	}
	for _, a := range p {
		if err := r.step(ctx, a); err != nil {
			return r.takeBack(ctx, err)
		}
	}
	return nil
}

// takeBack undoes what the plan did before failing with err, when asked
// to, and says what it could not undo.
func (r *planRunner) takeBack(ctx context.Context, err error) error {
	if !r.undoOnFailure || len(r.undo) == 0 {
		return err
	}
	fmt.Fprintf(r.out, "failed: %v; undoing what was done\n", err)
	var left []string
	for i := len(r.undo) - 1; i >= 0; i-- {
		u := r.undo[i]
		if uerr := u.do(ctx); uerr != nil {
			fmt.Fprintf(r.out, "could not undo: %s: %v\n", u.what, uerr)
			left = append(left, u.what)
			continue
		}
		fmt.Fprintf(r.out, "undone: %s\n", u.what)
	}
	r.undo = nil
	if len(left) > 0 {
		return fmt.Errorf("%w; not undone: %s", err, strings.Join(left, "; "))
	}
	return fmt.Errorf("%w; everything it had done is undone", err)
}

// onUndo records how to take back a step that was done.
func (r *planRunner) onUndo(what string, do func(ctx context.Context) error) {
	r.undo = append(r.undo, undoStep{what: what, do: do})
}

func (r *planRunner) step(ctx context.Context, a action) error {
	switch a.kind {
	case actMkdir:
		return r.mkdir(a)
	case actWrite, actCreate:
		return r.write(a)
	case actRun:
		return r.run(ctx, a)
	case actRemove, actRemoveAll, actRemoveEmpty:
		return r.remove(a)
	case actNote:
		fmt.Fprintln(r.out, "note: "+a.note)
		return nil
	}
	return fmt.Errorf("unknown action kind %d", a.kind)
}

func (r *planRunner) mkdir(a action) error {
	if fi, err := os.Stat(r.path(a.path)); err == nil && fi.IsDir() {
		return nil
	}
	if r.dryRun {
		fmt.Fprintf(r.out, "create directory %s (%04o)\n", a.path, a.mode)
		return nil
	}
	// The directories this makes, outermost first, to remove on undo.
	var made []string
	for d := a.path; ; d = filepath.Dir(d) {
		if _, err := os.Stat(r.path(d)); err == nil || d == filepath.Dir(d) {
			break
		}
		made = append([]string{d}, made...)
	}
	if err := os.MkdirAll(r.path(a.path), a.mode); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	for i := len(made) - 1; i >= 0; i-- {
		d := made[i]
		r.onUndo("remove directory "+d, func(context.Context) error { return os.Remove(r.path(d)) })
	}
	// MkdirAll's mode passes through the umask; say what we mean.
	if err := os.Chmod(r.path(a.path), a.mode); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	fmt.Fprintf(r.out, "created directory %s\n", a.path)
	return nil
}

func (r *planRunner) write(a action) error {
	old, err := os.ReadFile(r.path(a.path))
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s: %w", a.path, err)
	case exists && a.kind == actCreate:
		fmt.Fprintf(r.out, "keep existing %s\n", a.path)
		return nil
	case exists && bytes.Equal(old, a.content):
		fmt.Fprintf(r.out, "unchanged %s\n", a.path)
		return nil
	}
	verb := "write"
	if exists {
		verb = "replace"
	}
	if r.dryRun {
		if a.summary != "" {
			fmt.Fprintf(r.out, "%s %s (%04o): %s\n", verb, a.path, a.mode, a.summary)
			return nil
		}
		fmt.Fprintf(r.out, "%s %s (%04o):\n", verb, a.path, a.mode)
		for line := range strings.Lines(string(a.content)) {
			fmt.Fprint(r.out, "    "+line)
		}
		return nil
	}
	mode := fs.FileMode(0o600) // the replaced file's, for undo
	if fi, err := os.Stat(r.path(a.path)); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := config.WriteFileAtomic(r.path(a.path), a.content, a.mode); err != nil {
		return err
	}
	if exists {
		r.onUndo("restore "+a.path, func(context.Context) error { return config.WriteFileAtomic(r.path(a.path), old, mode) })
	} else {
		r.onUndo("remove "+a.path, func(context.Context) error { return os.Remove(r.path(a.path)) })
	}
	done := "wrote"
	if exists {
		done = "replaced"
	}
	fmt.Fprintf(r.out, "%s %s\n", done, a.path)
	return nil
}

func (r *planRunner) run(ctx context.Context, a action) error {
	line := strings.Join(a.argv, " ")
	if r.dryRun {
		fmt.Fprintf(r.out, "run: %s\n", line)
		return nil
	}
	fmt.Fprintf(r.out, "run: %s\n", line)
	err := r.commands.Run(ctx, r.out, a.argv)
	switch {
	case err == nil:
		if a.undo != nil {
			undo := a.undo
			r.onUndo(strings.Join(undo, " "), func(ctx context.Context) error { return r.commands.Run(ctx, r.out, undo) })
		}
		return nil
	case a.tolerated:
		fmt.Fprintf(r.out, "(%s: %v; going on)\n", a.argv[0], err)
		return nil
	}
	return fmt.Errorf("%s: %w", line, err)
}

func (r *planRunner) remove(a action) error {
	fi, err := os.Lstat(r.path(a.path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	if a.kind == actRemoveEmpty {
		entries, err := os.ReadDir(r.path(a.path))
		if err != nil || len(entries) > 0 || !fi.IsDir() {
			return nil // not empty: it holds files that are not ours
		}
	}
	if r.dryRun {
		fmt.Fprintf(r.out, "remove %s\n", a.path)
		return nil
	}
	if a.kind == actRemoveAll {
		err = os.RemoveAll(r.path(a.path))
	} else {
		err = os.Remove(r.path(a.path))
	}
	if err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	fmt.Fprintf(r.out, "removed %s\n", a.path)
	return nil
}
