package service

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

// A Plan is what a `service` command does, as data: the same plan is
// printed by a dry run and carried out otherwise, so what the dry run
// shows is exactly what would happen.
type Plan []Action

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

// An Action is one step of a Plan.
type Action struct {
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

func mkdirAction(path string, mode fs.FileMode) Action {
	return Action{kind: actMkdir, path: path, mode: mode}
}

func writeAction(path string, mode fs.FileMode, content []byte) Action {
	return Action{kind: actWrite, path: path, mode: mode, content: content}
}

func runAction(argv ...string) Action { return Action{kind: actRun, argv: argv} }

func tolerantRun(argv ...string) Action { return Action{kind: actRun, argv: argv, tolerated: true} }

func noteAction(format string, args ...any) Action {
	return Action{kind: actNote, note: fmt.Sprintf(format, args...)}
}

// CommandRunner runs service-manager commands (systemctl, launchctl,
// systemd-sysusers); tests replace it.
type CommandRunner interface {
	// Run runs argv with its output on out and returns its error,
	// *exec.ExitError when it ran and failed.
	Run(ctx context.Context, out io.Writer, argv []string) error
}

// ExecRunner runs commands for real.
type ExecRunner struct{}

// Run runs argv, found on PATH, with its output on out.
func (ExecRunner) Run(ctx context.Context, out io.Writer, argv []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("%s is not installed or not on PATH: %w", argv[0], err)
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}

// Runner carries out or prints a plan. FSRoot prefixes every path it
// touches (tests point it at a temporary directory); the paths it prints and
// writes into files are the ones given.
type Runner struct {
	Out      io.Writer
	Commands CommandRunner
	FSRoot   string
	DryRun   bool
	Header   string // a line said before the plan runs, if any
	// UndoOnFailure takes back the steps done when one fails, newest
	// first, so that a failed install leaves the machine as it was.
	UndoOnFailure bool
	undo          []undoStep
}

// undoStep takes back one thing a step did.
type undoStep struct {
	what string // for the output: "remove /etc/…"
	do   func(ctx context.Context) error
}

func (r *Runner) path(p string) string {
	if r.FSRoot == "" {
		return p
	}
	return filepath.Join(r.FSRoot, p)
}

// Execute carries out p, or prints it in a dry run.
func (r *Runner) Execute(ctx context.Context, p Plan) error {
	if r.DryRun {
		fmt.Fprintln(r.Out, "dry run: nothing is changed; this is what would be done")
	}
	if r.Header != "" {
		fmt.Fprintln(r.Out, r.Header)
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
func (r *Runner) takeBack(ctx context.Context, err error) error {
	if !r.UndoOnFailure || len(r.undo) == 0 {
		return err
	}
	fmt.Fprintf(r.Out, "failed: %v; undoing what was done\n", err)
	var left []string
	for i := len(r.undo) - 1; i >= 0; i-- {
		u := r.undo[i]
		if uerr := u.do(ctx); uerr != nil {
			fmt.Fprintf(r.Out, "could not undo: %s: %v\n", u.what, uerr)
			left = append(left, u.what)
			continue
		}
		fmt.Fprintf(r.Out, "undone: %s\n", u.what)
	}
	r.undo = nil
	if len(left) > 0 {
		return fmt.Errorf("%w; not undone: %s", err, strings.Join(left, "; "))
	}
	return fmt.Errorf("%w; everything it had done is undone", err)
}

// onUndo records how to take back a step that was done.
func (r *Runner) onUndo(what string, do func(ctx context.Context) error) {
	r.undo = append(r.undo, undoStep{what: what, do: do})
}

func (r *Runner) step(ctx context.Context, a Action) error {
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
		fmt.Fprintln(r.Out, "note: "+a.note)
		return nil
	}
	return fmt.Errorf("unknown action kind %d", a.kind)
}

func (r *Runner) mkdir(a Action) error {
	if fi, err := os.Stat(r.path(a.path)); err == nil && fi.IsDir() {
		return nil
	}
	if r.DryRun {
		fmt.Fprintf(r.Out, "create directory %s (%04o)\n", a.path, a.mode)
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
	// Undo runs newest first: the innermost directory goes first.
	for _, d := range made {
		r.onUndo("remove directory "+d, func(context.Context) error { return os.Remove(r.path(d)) })
	}
	// MkdirAll's mode passes through the umask; say what we mean.
	if err := os.Chmod(r.path(a.path), a.mode); err != nil {
		return fmt.Errorf("create directory: %w", err)
	}
	fmt.Fprintf(r.Out, "created directory %s\n", a.path)
	return nil
}

func (r *Runner) write(a Action) error {
	old, err := os.ReadFile(r.path(a.path))
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s: %w", a.path, err)
	case exists && a.kind == actCreate:
		fmt.Fprintf(r.Out, "keep existing %s\n", a.path)
		return nil
	case exists && bytes.Equal(old, a.content):
		fmt.Fprintf(r.Out, "unchanged %s\n", a.path)
		return nil
	}
	verb := "write"
	if exists {
		verb = "replace"
	}
	if r.DryRun {
		if a.summary != "" {
			fmt.Fprintf(r.Out, "%s %s (%04o): %s\n", verb, a.path, a.mode, a.summary)
			return nil
		}
		fmt.Fprintf(r.Out, "%s %s (%04o):\n", verb, a.path, a.mode)
		for line := range strings.Lines(string(a.content)) {
			fmt.Fprint(r.Out, "    "+line)
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
	fmt.Fprintf(r.Out, "%s %s\n", done, a.path)
	return nil
}

func (r *Runner) run(ctx context.Context, a Action) error {
	line := strings.Join(a.argv, " ")
	fmt.Fprintf(r.Out, "run: %s\n", line)
	if r.DryRun {
		return nil
	}
	err := r.Commands.Run(ctx, r.Out, a.argv)
	switch {
	case err == nil:
		if a.undo != nil {
			undo := a.undo
			r.onUndo(strings.Join(undo, " "), func(ctx context.Context) error { return r.Commands.Run(ctx, r.Out, undo) })
		}
		return nil
	case a.tolerated:
		fmt.Fprintf(r.Out, "(%s: %v; going on)\n", a.argv[0], err)
		return nil
	}
	return fmt.Errorf("%s: %w", line, err)
}

func (r *Runner) remove(a Action) error {
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
	if r.DryRun {
		fmt.Fprintf(r.Out, "remove %s\n", a.path)
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
	fmt.Fprintf(r.Out, "removed %s\n", a.path)
	return nil
}
