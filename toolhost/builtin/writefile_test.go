package builtin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
)

func newWrite(a *files.Access, maxBytes int64) *writeTool {
	return New(a, maxBytes)[3].(*writeTool)
}

// readBack returns the content of p, failing the test if it is missing.
func readBack(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTemps fails if a temporary file of WriteFile is left anywhere under dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".vcpnode-tmp") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestWriteFileSpecAsksByDefault(t *testing.T) {
	s := newWrite(access(t, nil, realDir(t)), 0).Spec()
	if s.Approval != toolhost.ApprovalAsk || !s.Builtin || s.Timeout <= toolhost.DefaultApprovalTimeout {
		t.Errorf("WriteFile spec: approval %q, builtin %t, timeout %s; want ask, true, over the approval wait", s.Approval, s.Builtin, s.Timeout)
	}
	if mode, _ := (toolhost.Policy{}).Approval(s); mode != toolhost.ApprovalAsk {
		t.Errorf("the policy gives WriteFile approval %q by default, want ask", mode)
	}
}

func TestWriteFileCreatesReplacesAppends(t *testing.T) {
	root := realDir(t)
	writeTree(t, root, map[string]string{"notes.txt": "old\n", "inner.txt": "inner\n", "link.txt": "->inner.txt"})
	w := newWrite(access(t, nil, root), 0)
	notes := filepath.Join(root, "notes.txt")
	if err := os.Chmod(notes, 0o640); err != nil {
		t.Fatal(err)
	}
	// A hard link from outside the root must keep the old content: the
	// file is replaced, never written through.
	outside := t.TempDir()
	if err := os.Link(notes, filepath.Join(outside, "hard.txt")); err != nil {
		t.Fatal(err)
	}

	steps := []struct {
		args []any
		want string // the answer
		file string // the path checked afterwards, and its content
		body string
	}{
		{[]any{"path", "new.txt", "content", "hello\n"}, "created " + filepath.Join(root, "new.txt") + ": 6 bytes\n", "new.txt", "hello\n"},
		{[]any{"path", "a/b/c.md", "content", "# c\n"}, "created " + filepath.Join(root, "a/b/c.md") + ": 4 bytes (and its folder \"" + filepath.Join(root, "a/b") + "\")\n", "a/b/c.md", "# c\n"},
		{[]any{"path", notes, "content", "new content\n"}, "replaced " + notes + ": 12 bytes (was 4 bytes)\n", "notes.txt", "new content\n"},
		{[]any{"path", "file://" + notes, "content", "more\n", "append", "true"}, "appended 5 bytes to " + notes + ": now 17 bytes\n", "notes.txt", "new content\nmore\n"},
		{[]any{"path", "fresh.log", "content", "first\n", "append", true}, "created " + filepath.Join(root, "fresh.log") + ": 6 bytes\n", "fresh.log", "first\n"},
		{[]any{"path", "empty.txt", "content", ""}, "created " + filepath.Join(root, "empty.txt") + ": 0 bytes\n", "empty.txt", ""},
		// A symlink inside the root is followed, as ReadFile follows it; the link stays.
		{[]any{"path", "link.txt", "content", "via link\n"}, "replaced " + filepath.Join(root, "link.txt") + ": 9 bytes (was 6 bytes)\n", "inner.txt", "via link\n"},
	}
	for _, s := range steps {
		if got := run(t, w, args(t, s.args...)); got != s.want {
			t.Errorf("WriteFile %v:\n%q\nwant\n%q", s.args, got, s.want)
		}
		if got := readBack(t, filepath.Join(root, s.file)); got != s.body {
			t.Errorf("after WriteFile %v, %s holds %q, want %q", s.args, s.file, got, s.body)
		}
	}
	if info, err := os.Stat(notes); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("replaced file's mode: %v %v, want 0640 kept", info.Mode(), err)
	}
	if got := readBack(t, filepath.Join(outside, "hard.txt")); got != "old\n" {
		t.Errorf("the hard link outside the root now holds %q; the write went through it", got)
	}
	if info, err := os.Lstat(filepath.Join(root, "link.txt")); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.txt is no longer a symlink: %v %v", info, err)
	}
	noTemps(t, root)
}

func TestWriteFileRefusals(t *testing.T) {
	root, outside := realDir(t), realDir(t)
	writeTree(t, root, map[string]string{
		"out":          "->" + outside,
		"outfile.txt":  "->" + filepath.Join(outside, "target.txt"),
		"node.toml":    "[hub]\n",
		"state/x.json": "{}",
		"key.txt":      "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n",
		"logo.bin":     "\x89PNG\x00\x00",
		"plain.txt":    "plain\n",
		"sub/":         "",
	})
	writeTree(t, outside, map[string]string{"target.txt": "outside\n"})
	deny := []string{filepath.Join(root, "node.toml"), filepath.Join(root, "state"), filepath.Join(root, "state2")}
	w := newWrite(access(t, deny, root), 0)
	for _, c := range []struct {
		path, content string
		kind          error
		want          string
	}{
		{filepath.Join(outside, "new.txt"), "x", files.ErrOutsideRoots, "outside the directories this node serves"},
		{filepath.Join(outside, "target.txt"), "x", files.ErrOutsideRoots, "outside the directories"},
		{"out/new.txt", "x", files.ErrOutsideRoots, "outside the directories"},
		{"out/deeper/new.txt", "x", files.ErrOutsideRoots, "outside the directories"},
		{"outfile.txt", "x", files.ErrOutsideRoots, "outside the directories"},
		{"../escape.txt", "x", files.ErrOutsideRoots, "outside the directories"},
		{"node.toml", "x", files.ErrSecretFile, "denied"},
		{"state/x.json", "x", files.ErrSecretFile, "denied"},
		{"state/new.json", "x", files.ErrSecretFile, "denied"},
		{"state2/sub/new.json", "x", files.ErrSecretFile, "never written"}, // a denied folder that does not exist yet
		{".env", "KEY=1", files.ErrSecretFile, "secrets"},
		{"deep/.ssh/config", "x", files.ErrSecretFile, ".ssh"},
		{"id_ed25519", "x", files.ErrSecretFile, "secrets"},
		{"key.txt", "x", files.ErrSecretFile, "private key"},
		{"new-key.txt", "-----BEGIN RSA PRIVATE KEY-----\n", files.ErrSecretFile, "private key"},
		{"logo.bin", "x", ErrBinaryFile, "binary file"},
		{"nul.txt", "a\x00b", ErrBinaryFile, "NUL byte"},
		{"sub", "x", files.ErrNotRegularFile, "directory"},
		{"plain.txt/child.txt", "x", ErrNotDirectory, "not a folder"},
		{"plain.txt/a/child.txt", "x", ErrNotDirectory, "not a folder"},
	} {
		err := fail(t, w, args(t, "path", c.path, "content", c.content))
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), outside) && !strings.HasPrefix(c.path, outside) {
			t.Errorf("WriteFile %q: %v, want %v saying %q", c.path, err, c.kind, c.want)
		}
	}
	if got := readBack(t, filepath.Join(outside, "target.txt")); got != "outside\n" {
		t.Errorf("the file outside the root was changed: %q", got)
	}
	for _, p := range []string{filepath.Join(outside, "new.txt"), filepath.Join(outside, "deeper"), filepath.Join(root, "nul.txt"), filepath.Join(root, "state/new.json"), filepath.Join(root, "state2"), filepath.Join(root, "deep")} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after a refused write (%v)", p, err)
		}
	}
	if got := readBack(t, filepath.Join(root, "node.toml")); got != "[hub]\n" {
		t.Errorf("the node's config was changed: %q", got)
	}
	for _, a := range [][]any{{"content", "x"}, {"path", "p.txt"}, {"path", "p.txt", "content", 3}, {"path", "p.txt", "content", "x", "append", "maybe"}} {
		if err := fail(t, w, args(t, a...)); !errors.Is(err, ErrBadArgument) {
			t.Errorf("WriteFile %v: %v, want a bad argument", a, err)
		}
	}
	noTemps(t, root)
}

func TestWriteFileSizeCap(t *testing.T) {
	root := realDir(t)
	writeTree(t, root, map[string]string{"log.txt": "0123456789"})
	w := newWrite(access(t, nil, root), 16)
	if got := run(t, w, args(t, "path", "exact.txt", "content", strings.Repeat("x", 16))); !strings.HasSuffix(got, ": 16 bytes\n") {
		t.Errorf("16 bytes under a 16-byte cap: %q", got)
	}
	if err := fail(t, w, args(t, "path", "big.txt", "content", strings.Repeat("x", 17))); !errors.Is(err, files.ErrFileTooLarge) || !strings.Contains(err.Error(), "17 bytes, over this node's limit of 16 bytes") {
		t.Errorf("17 bytes under a 16-byte cap: %v", err)
	}
	run(t, w, args(t, "path", "log.txt", "content", "abcdef", "append", true))
	if err := fail(t, w, args(t, "path", "log.txt", "content", "g", "append", true)); !errors.Is(err, files.ErrFileTooLarge) || !strings.Contains(err.Error(), "it is 16 bytes; with 1 more") {
		t.Errorf("appending past the cap: %v", err)
	}
	if got := readBack(t, filepath.Join(root, "log.txt")); got != "0123456789abcdef" {
		t.Errorf("log.txt = %q after a refused append", got)
	}
	if _, err := os.Stat(filepath.Join(root, "big.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("big.txt exists after a refused write: %v", err)
	}
	noTemps(t, root)
}

func TestWriteFileWithoutRoots(t *testing.T) {
	w := newWrite(files.NewAccess(files.Options{}), 0)
	if err := fail(t, w, args(t, "path", "/tmp/x.txt", "content", "x")); !errors.Is(err, files.ErrFileServingDisabled) {
		t.Errorf("WriteFile with no roots: %v", err)
	}
}
