package builtin

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost/files"
)

func newRead(a *files.Access) *readTool { return New(a, 0)[1].(*readTool) }

func TestReadFileWholeAndRanges(t *testing.T) {
	root := realDir(t)
	writeTree(t, root, map[string]string{
		"notes.txt": "one\ntwo\r\nthree\nfour\n",
		"empty.txt": "",
		"sub/x.md":  "no newline at the end",
	})
	read := newRead(access(t, nil, root))
	notes := filepath.Join(root, "notes.txt")
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{"path", "notes.txt"}, notes + ", lines 1-4 of 4:\none\ntwo\nthree\nfour\n"},
		{[]any{"path", notes, "startLine", "2", "endLine", 3}, notes + ", lines 2-3 (20 bytes in all):\ntwo\nthree\n"},
		{[]any{"path", notes, "startLine", 3}, notes + ", lines 3-4 of 4:\nthree\nfour\n"},
		{[]any{"path", notes, "startLine", 4, "endLine", 99}, notes + ", lines 4-4 of 4:\nfour\n"},
		{[]any{"path", "empty.txt"}, filepath.Join(root, "empty.txt") + ": empty file\n"},
		{[]any{"path", "sub/x.md"}, filepath.Join(root, "sub/x.md") + ", lines 1-1 of 1:\nno newline at the end\n"},
	} {
		if got := run(t, read, args(t, c.args...)); got != c.want {
			t.Errorf("ReadFile %v:\n%q\nwant\n%q", c.args, got, c.want)
		}
	}
}

func TestReadFileCapsItsAnswer(t *testing.T) {
	root := realDir(t)
	line := strings.Repeat("x", 99) + "\n"
	big := strings.Repeat(line, 5000) // 500,000 bytes, over the 256 KiB answer cap
	long := strings.Repeat("y", maxLineBytes+10) + "\nshort\n"
	writeTree(t, root, map[string]string{"big.txt": big, "long.txt": long})
	read := newRead(access(t, nil, root))

	got := run(t, read, args(t, "path", "big.txt"))
	shown := maxReadOutput / len(line)
	wantHead := fmt.Sprintf("%s, lines 1-%d (500000 bytes in all):\n", filepath.Join(root, "big.txt"), shown)
	wantTail := fmt.Sprintf("[truncated: the answer is limited to %d bytes; ask for startLine=%d to read on]\n", maxReadOutput, shown+1)
	if !strings.HasPrefix(got, wantHead) || !strings.HasSuffix(got, wantTail) || len(got) > maxReadOutput+300 {
		t.Errorf("big file answer (%d bytes) starts %q, ends %q", len(got), got[:min(len(got), 120)], got[max(0, len(got)-160):])
	}
	got = run(t, read, args(t, "path", "big.txt", "startLine", shown+1))
	if !strings.HasPrefix(got, fmt.Sprintf("%s, lines %d-5000 of 5000:\n", filepath.Join(root, "big.txt"), shown+1)) {
		t.Errorf("reading on: %q", got[:min(len(got), 120)])
	}

	got = run(t, read, args(t, "path", "long.txt"))
	want := fmt.Sprintf("%s, lines 1-2 of 2:\n%s … (line cut at %d bytes)\nshort\n", filepath.Join(root, "long.txt"), strings.Repeat("y", maxLineBytes), maxLineBytes)
	if got != want {
		t.Errorf("long line answer %d bytes, want %d", len(got), len(want))
	}
}

func TestReadFileRefusals(t *testing.T) {
	root, outside := realDir(t), realDir(t)
	writeTree(t, outside, map[string]string{"secret.txt": "outside\n"})
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
	writeTree(t, root, map[string]string{
		"text.txt":         "a\nb\n",
		"image.png":        "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		".env":             "KEY=1\n",
		"notes/deploy.txt": "how to deploy\n" + key,
		"out":              "->" + outside,
		"out.txt":          "->" + filepath.Join(outside, "secret.txt"),
		"in.txt":           "->text.txt",
		"dir/":             "",
		"config.toml":      "key_file = '/x'\n",
	})
	read := newRead(access(t, []string{filepath.Join(root, "config.toml")}, root))
	for _, c := range []struct {
		name string
		args []any
		is   error
		text string
	}{
		{"binary", []any{"path", "image.png"}, ErrBinaryFile, "it is a binary file (16 bytes); ReadFile returns text only"},
		{"secret name", []any{"path", ".env"}, files.ErrSecretFile, "hold secrets and are never served"},
		{"private key inside", []any{"path", "notes/deploy.txt"}, files.ErrSecretFile, "it holds a private key"},
		{"private key above the range", []any{"path", "notes/deploy.txt", "startLine", 3}, files.ErrSecretFile, "it holds a private key"},
		{"denied", []any{"path", "config.toml"}, files.ErrSecretFile, "denied"},
		{"symlinked dir out", []any{"path", "out/secret.txt"}, files.ErrOutsideRoots, "outside the directories this node serves"},
		{"symlinked file out", []any{"path", "out.txt"}, files.ErrOutsideRoots, "outside the directories this node serves"},
		{"absolute outside", []any{"path", filepath.Join(outside, "secret.txt")}, files.ErrOutsideRoots, "outside"},
		{"system file", []any{"path", "/etc/passwd"}, files.ErrOutsideRoots, "outside"},
		{"directory", []any{"path", "dir"}, files.ErrNotRegularFile, "use DirectoryTree"},
		{"missing", []any{"path", "nope.txt"}, files.ErrFileUnreadable, "no such file"},
		{"no path", nil, ErrBadArgument, "path is required"},
		{"range backwards", []any{"path", "text.txt", "startLine", 5, "endLine", 2}, ErrBadArgument, "endLine 2 is before startLine 5"},
		{"past the end", []any{"path", "text.txt", "startLine", 9}, ErrBadArgument, "startLine 9 is past the end"},
		{"windows path", []any{"path", `D:\work\notes.txt`}, files.ErrWindowsPath, "Windows path"},
		{"file URL outside", []any{"path", "file:///etc/passwd"}, files.ErrOutsideRoots, `cannot serve "/etc/passwd": it is outside`},
		{"bad file URL", []any{"path", "file://otherhost/x"}, files.ErrBadFileURL, "otherhost"},
		{"bad number", []any{"path", "text.txt", "startLine", "first"}, ErrBadArgument, `startLine must be a whole number from 1 to 1073741824, got "first"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := fail(t, read, args(t, c.args...))
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.text) {
				t.Errorf("error %q (is %v: %v), want %q", err, c.is, errors.Is(err, c.is), c.text)
			}
			if strings.Contains(err.Error(), "outside\n") || strings.Contains(err.Error(), "BEGIN") {
				t.Errorf("error leaks content: %v", err)
			}
		})
	}
	// A file:// URL names a file as internal_request_file's do.
	u := (&url.URL{Scheme: "file", Path: filepath.Join(root, "text.txt")}).String()
	if got := run(t, read, args(t, "path", u)); got != filepath.Join(root, "text.txt")+", lines 1-2 of 2:\na\nb\n" {
		t.Errorf("file URL: %q", got)
	}
	// A symlink that stays inside the root is followed.
	if got := run(t, read, args(t, "path", "in.txt")); !strings.HasSuffix(got, ":\na\nb\n") {
		t.Errorf("in-root symlink: %q", got)
	}
}

func TestReadFileFifoIsRefusedWithoutBlocking(t *testing.T) {
	root := realDir(t)
	if err := mkfifo(filepath.Join(root, "pipe")); err != nil {
		t.Skipf("cannot make a fifo here: %v", err)
	}
	err := fail(t, newRead(access(t, nil, root)), args(t, "path", "pipe"))
	if !errors.Is(err, files.ErrNotRegularFile) {
		t.Errorf("fifo: %v", err)
	}
	_ = os.Remove(filepath.Join(root, "pipe"))
}
