package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/internal/doccheck"
	"github.com/vcpnode/vcpnode/toolconfig"
)

// Programs other than vcpnode, go, make and scripts/ that the docs may
// name in commands. A command of any other program fails
// TestDocSnippets: add it here when it is meant.
var externalPrograms = []string{
	"systemctl", "journalctl", "loginctl", "launchctl", "tail", "ps", "pidof", "id", "git", "npm",
	// docs/service.md's recipes without systemd (TestNoSystemdRecipes runs them)
	"nohup", "kill", "wait", "sleep", "tmux", "exec", "chpst",
}

// A toml block marked with this comment must fail to parse: it shows a
// mistake on purpose.
const invalidMarker = "doccheck: invalid"

// TestDocSnippets holds every snippet of README.md and docs/ (the
// generated docs/commands aside) to the code: each toml block parses as a
// config (or, marked invalid, fails to), each json block is JSON, and each
// command of an sh block or a console transcript names a real program;
// vcpnode commands are parsed by the command tree (subcommands, flags,
// arguments) and each command's --help runs, go commands name packages,
// tests and benchmarks that exist, scripts exist, make targets exist.
func TestDocSnippets(t *testing.T) {
	repo := filepath.Join("..", "..")
	docs, err := doccheck.Documents(repo, "docs/commands")
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	helped := map[string]bool{}
	initConfig := initConfigText(t)
	for _, doc := range docs {
		blocks, err := doccheck.Blocks(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			where := strings.TrimPrefix(b.Where(), repo+string(filepath.Separator))
			var cmds []doccheck.Command
			switch b.Lang {
			case "toml":
				if checkTOML(t, where, b) {
					checkSnippetApplied(t, initConfig, where, b.Text)
				}
			case "json":
				if !json.Valid([]byte(b.Text)) {
					t.Errorf("%s: the json block is not JSON", where)
				}
			case "sh":
				cmds, err = doccheck.Commands(b.Text)
			case "console":
				cmds, err = doccheck.Transcript(b.Text)
			case "text", "xml":
			default:
				t.Errorf("%s: a block of language %q; use one of %v so that it is checked as it should be", where, b.Lang, doccheck.Languages)
			}
			if err != nil {
				t.Errorf("%s: %v", where, err)
			}
			for _, c := range cmds {
				at := fmt.Sprintf("%s (block line %d): %s", where, c.Line, strings.Join(c.Args, " "))
				if path, err := checkCommand(repo, c.Args); err != nil {
					t.Errorf("%s: %v", at, err)
				} else if path != "" {
					helped[path] = true
				}
			}
			checked[b.Lang]++
		}
	}
	t.Logf("blocks checked: %v; vcpnode commands: %d", checked, len(helped))
	if checked["toml"] < 5 || checked["sh"] < 5 || checked["console"] < 5 || len(helped) < 10 {
		t.Errorf("too few snippets found (%v, %d vcpnode commands): is the extraction broken?", checked, len(helped))
	}
	// Each vcpnode command the docs use answers --help.
	for path := range helped {
		ta := newTestApp(t)
		args := append(strings.Fields(path)[1:], "--help")
		if code := ta.run(args...); code != exitOK || !strings.Contains(ta.stdout.String(), "Usage:") {
			t.Errorf("%s --help: exit %d\n%s%s", path, code, ta.stdout, ta.stderr)
		}
	}
}

// checkTOML parses a config snippet over the defaults, strictly, as the
// daemon reads a whole file: a snippet is a valid config by itself. It
// reports whether the snippet is one to apply (valid, and meant to be).
func checkTOML(t *testing.T, where string, b doccheck.Block) bool {
	t.Helper()
	_, err := config.Parse([]byte(b.Text), where, toolconfig.Check)
	switch invalid := b.Marked(invalidMarker); {
	case invalid && err == nil:
		t.Errorf("%s: marked <!-- %s --> but parses as a config", where, invalidMarker)
	case !invalid && err != nil:
		t.Errorf("%s: the config snippet does not parse (mark it <!-- %s --> if that is the point):\n%v", where, invalidMarker, err)
	case !invalid:
		return true
	}
	return false
}

// checkCommand checks one command of the docs; for a vcpnode command it
// returns its command path ("vcpnode config check").
func checkCommand(repo string, args []string) (string, error) {
	name := args[0]
	switch {
	case filepath.Base(name) == "vcpnode":
		return checkVCPNode(args[1:])
	case name == "go":
		return checkGo(repo, args[1:])
	case name == "make":
		return "", checkMake(repo, args[1:])
	case strings.HasPrefix(strings.TrimPrefix(name, "./"), "scripts/"):
		fi, err := os.Stat(filepath.Join(repo, filepath.FromSlash(name)))
		if err != nil || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not an executable of the repository", name)
		}
		return "", nil
	case slices.Contains(externalPrograms, name):
		return "", nil
	}
	return "", fmt.Errorf("%q is not a program the docs are known to use (externalPrograms)", name)
}

// checkVCPNode parses args as the command tree would, without running
// the command: the subcommand, its flags and its positional arguments.
func checkVCPNode(args []string) (string, error) {
	for i, a := range args {
		if a == doccheck.Unknown {
			args[i] = "X" // a value only the shell knows
		}
	}
	root := newRootCmd(docsApp())
	root.InitDefaultCompletionCmd()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return "", err
	}
	if cmd.HasSubCommands() && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return "", noSubcommand(cmd, rest[:1])
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return "", fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	for _, check := range []func() error{
		func() error { return cmd.ValidateArgs(cmd.Flags().Args()) },
		cmd.ValidateRequiredFlags,
		cmd.ValidateFlagGroups,
	} {
		if err := check(); err != nil {
			return "", fmt.Errorf("%s: %w", cmd.CommandPath(), err)
		}
	}
	if !cmd.Runnable() {
		return "", fmt.Errorf("%s is not a command that runs", cmd.CommandPath())
	}
	return cmd.CommandPath(), nil
}

// checkGo checks go build/test/run/generate lines: their packages exist,
// `go run ./cmd/vcpnode ARGS` is a vcpnode command, and -run/-bench name
// tests that exist.
func checkGo(repo string, args []string) (string, error) {
	if len(args) == 0 || !slices.Contains([]string{"build", "test", "run", "generate", "vet"}, args[0]) {
		return "", fmt.Errorf("go %v: not a go command the docs are known to use", args)
	}
	var pkgs []string
	var run []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "./"):
			dir := strings.TrimSuffix(strings.TrimSuffix(a, "..."), "/")
			if fi, err := os.Stat(filepath.Join(repo, filepath.FromSlash(dir))); err != nil || !fi.IsDir() {
				return "", fmt.Errorf("no package %s", a)
			}
			if args[0] == "run" {
				if dir == "./cmd/vcpnode" {
					return checkVCPNode(args[i+1:])
				}
				return "", nil // the arguments are that program's
			}
			if !strings.HasSuffix(a, "...") {
				pkgs = append(pkgs, dir)
			}
		case (a == "-run" || a == "-bench" || a == "-fuzz") && i+1 < len(args):
			run = append(run, args[i+1])
			i++
		case strings.HasPrefix(a, "-run=") || strings.HasPrefix(a, "-bench=") || strings.HasPrefix(a, "-fuzz="):
			_, v, _ := strings.Cut(a, "=")
			run = append(run, v)
		}
	}
	for _, pattern := range run {
		if err := testsExist(repo, pkgs, pattern); err != nil {
			return "", err
		}
	}
	return "", nil
}

// A -run or -bench pattern made of names only: each name must start a
// test, benchmark or fuzz target of one of the packages.
var plainPattern = regexp.MustCompile(`^\^?([A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*)\$?$`)

func testsExist(repo string, pkgs []string, pattern string) error {
	m := plainPattern.FindStringSubmatch(strings.Trim(pattern, "'"))
	if m == nil || len(pkgs) == 0 {
		return nil // ^$, ".", a real regexp: nothing to look up
	}
	var funcs []string
	for _, p := range pkgs {
		files, _ := filepath.Glob(filepath.Join(repo, filepath.FromSlash(p), "*_test.go"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			for _, fm := range regexp.MustCompile(`(?m)^func ((Test|Benchmark|Fuzz)\w*)\(`).FindAllStringSubmatch(string(data), -1) {
				funcs = append(funcs, fm[1])
			}
		}
	}
	for _, name := range strings.Split(m[1], "|") {
		if !slices.ContainsFunc(funcs, func(f string) bool {
			return strings.HasPrefix(f, name) || strings.HasPrefix(f, "Test"+name) || strings.HasPrefix(f, "Benchmark"+name) || strings.HasPrefix(f, "Fuzz"+name)
		}) {
			return fmt.Errorf("no test, benchmark or fuzz target %q in %v", name, pkgs)
		}
	}
	return nil
}

// checkMake: each target is a rule of the Makefile.
func checkMake(repo string, targets []string) error {
	data, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		return err
	}
	for _, target := range targets {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).Match(data) {
			return fmt.Errorf("make %s: no such target", target)
		}
	}
	return nil
}
