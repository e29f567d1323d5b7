package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// walk calls fn for cmd and every command below it.
func walk(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, c := range cmd.Commands() {
		walk(c, fn)
	}
}

// The tree is built in one place: every command is there on a fresh root,
// each root is a new tree, and no file registers commands from init.
func TestCommandTreeIsBuiltInOnePlace(t *testing.T) {
	a, b := newRootCmd(newTestApp(t).app), newRootCmd(newTestApp(t).app)
	var names []string
	for _, c := range a.Commands() {
		names = append(names, c.Name())
	}
	for _, want := range []string{"init", "config", "service", "run", "demo", "status", "tools", "call",
		"placeholders", "approvals", "approve", "deny", "reload", "reconnect", "version", "parse"} {
		if !slices.Contains(names, want) {
			t.Errorf("root lacks %q (has %v)", want, names)
		}
	}
	if ca, _, _ := a.Find([]string{"status"}); ca == nil {
		t.Fatal("no status command")
	} else if cb, _, _ := b.Find([]string{"status"}); cb == ca {
		t.Error("two roots share their commands")
	}
	walk(a, func(c *cobra.Command) {
		if c.Short == "" && c.Name() != "completion" {
			t.Errorf("%q has no short help", c.CommandPath())
		}
	})

	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "init" {
				t.Errorf("%s has func init: add commands in newRootCmd (commands.go)", fset.Position(fn.Pos()))
			}
		}
	}
}

// Help shows a real value name after every flag that takes one, and the
// shared flags mean one thing everywhere: --config FILE, --socket PATH,
// --json (no value) for JSON output.
func TestFlagsHaveValueNamesAndOneMeaning(t *testing.T) {
	root := newRootCmd(newTestApp(t).app)
	shared := map[string]string{"config": "FILE", "socket": "PATH", "json": ""}
	walk(root, func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			name, usage := pflag.UnquoteUsage(f)
			where := c.CommandPath() + " --" + f.Name
			if want, ok := shared[f.Name]; ok && name != want {
				t.Errorf("%s takes %q; every command's --%s takes %q", where, name, f.Name, want)
			}
			if f.Value.Type() == "bool" {
				return
			}
			if name == "" || name != strings.ToUpper(name) || strings.ContainsAny(name, " '`") {
				t.Errorf("%s shows the value name %q; backquote an upper-case word in its usage", where, name)
			}
			if strings.Contains(usage, "`") {
				t.Errorf("%s usage keeps a backquote: %q", where, usage)
			}
		})
	})
	if f := root.PersistentFlags().Lookup("log-level"); f == nil {
		t.Fatal("no --log-level")
	} else if name, _ := pflag.UnquoteUsage(f); name != "LEVEL" {
		t.Errorf("--log-level shows %q", name)
	}
}

// Help for a command that does not exist is an error, not the parent's
// help with exit 0; help for one that exists still works.
func TestHelpOfUnknownCommandExitsTwo(t *testing.T) {
	for _, args := range [][]string{{"frobnicate", "--help"}, {"config", "nope", "-h"}, {"service", "bogus", "--help"}} {
		ta := newTestApp(t)
		if code := ta.run(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d; stdout %q", args, code, exitUsage, ta.stdout)
		}
		if !strings.Contains(ta.stderr.String(), "unknown command \""+args[len(args)-2]+"\"") || ta.stdout.String() != "" {
			t.Errorf("%v: stdout %q stderr %q", args, ta.stdout, ta.stderr)
		}
	}
	ta := newTestApp(t)
	if code := ta.run("status", "--help"); code != exitOK || !strings.Contains(ta.stdout.String(), "--socket PATH") {
		t.Errorf("status --help: exit %d, stdout %q", code, ta.stdout)
	}
}
