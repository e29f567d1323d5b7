//go:build linux

package files

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vcpnode/vcpnode/toolhost"
)

// The direct open takes only what needs no resolving: a regular file within
// the cap whose path has no symlink in it. Everything else is left to the
// general path, which explains refusals.
func TestOpenDirectTakesOnlySymlinkFreeRegularFiles(t *testing.T) {
	requireOpenat2(t)
	fx := newFileFixture(t)
	for _, tc := range []struct {
		name string
		path string
		want bool
	}{
		{"plain file", fx.root + "/hello.txt", true},
		{"nested file", fx.root + "/sub/deep.txt", true},
		{"exactly at the cap", fx.root + "/exact.bin", true},
		{"symlink as the last component", fx.root + "/link-in", false},
		{"symlink to a directory above", fx.rootLink + "/hello.txt", false},
		{"symlink out of the root", fx.root + "/link-dir-out/secret.txt", false},
		{"over the cap", fx.root + "/big.bin", false},
		{"directory", fx.root + "/dir", false},
		{"fifo", fx.root + "/fifo", false},
		{"missing", fx.root + "/missing.txt", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := openDirect(tc.path, testMaxBytes)
			if ok != tc.want {
				t.Fatalf("openDirect(%s) = %v, want %v", tc.path, ok, tc.want)
			}
			if !ok {
				return
			}
			defer d.Close()
			want, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, len(want)+1)
			n, err := readSmall(d, buf, int(d.size))
			if (err != nil && !errors.Is(err, io.EOF)) || !bytes.Equal(buf[:n], want) || d.size != int64(len(want)) {
				t.Fatalf("read %q (size %d), %v; want %q", buf[:n], d.size, err, want)
			}
		})
	}
}

// Without openat2 (an old kernel, a seccomp filter) every request takes the
// general path and gets the same answers.
func TestFileToolWithoutOpenat2(t *testing.T) {
	directUnavailable.Store(true)
	t.Cleanup(func() { directUnavailable.Store(false) })
	t.Run("serves", TestFileToolServes)
	t.Run("refuses", TestFileToolRefuses)
	t.Run("small and streamed agree", TestSmallAndStreamedResultsAgree)
}

// A directory of the path swapped for a symlink out of the root while files
// are requested through it never gets the outside file served, whether the
// request names the path directly or through a symlink to the root (the
// general path): the open follows no symlink anywhere in the path, so a swap
// after the checks fails it instead of leading it out.
func TestSymlinkSwappedIntoThePathIsNeverFollowed(t *testing.T) {
	requireOpenat2(t)
	fx := newFileFixture(t)
	mustWrite(t, fx.root+"/swap/f.txt", "inside")
	mustWrite(t, fx.outside+"/swap/f.txt", "OUTSIDE")
	if err := os.Symlink(fx.outside+"/swap", fx.root+"/swap-link"); err != nil {
		t.Fatal(err)
	}
	// Swapping the two names at once: root/swap is by turns the directory
	// and a symlink to the outside one.
	exchange := func() error {
		return unix.Renameat2(unix.AT_FDCWD, fx.root+"/swap", unix.AT_FDCWD, fx.root+"/swap-link", unix.RENAME_EXCHANGE)
	}
	if err := exchange(); err != nil {
		t.Skipf("this file system cannot exchange a directory and a symlink (renameat2 RENAME_EXCHANGE): %v", err)
	}
	tool := NewTool(Options{Roots: []string{fx.root}, MaxBytes: testMaxBytes})
	stop := make(chan struct{})
	var swaps sync.WaitGroup
	swaps.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := exchange(); err != nil {
				t.Errorf("exchange: %v", err)
				return
			}
		}
	})
	served, refused := 0, 0
	for i := range 4000 {
		p := fx.root + "/swap/f.txt"
		if i%2 == 1 {
			p = fx.rootLink + "/swap/f.txt"
		}
		v, err := tool.Invoke(context.Background(), toolhost.Call{RequestID: "r", Args: stringArg(fileURL(p))})
		if err != nil {
			refused++
			continue
		}
		served++
		if got := servedData(t, v); got != "inside" {
			close(stop)
			swaps.Wait()
			t.Fatalf("call %d served %q through a swapped-in symlink", i, got)
		}
	}
	close(stop)
	swaps.Wait()
	t.Logf("%d served from inside, %d refused while the path changed", served, refused)
}

// A root replaced after start is judged by what its path is now: replaced by
// a symlink out of the roots, nothing under it is served; replaced by another
// directory, that directory's files are.
func TestRootReplacedAfterStart(t *testing.T) {
	fx := newFileFixture(t)
	tool := fx.tool()
	if err := os.Rename(fx.root, fx.root+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fx.outside, fx.root); err != nil {
		t.Fatal(err)
	}
	_, err := invokeFile(t, tool, stringArg(fileURL(fx.root+"/secret.txt")))
	if !errors.Is(err, ErrOutsideRoots) {
		t.Fatalf("through a root replaced by a symlink out: %v, want ErrOutsideRoots", err)
	}
	if err := os.Remove(fx.root); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, fx.root+"/hello.txt", "the new root")
	v, err := invokeFile(t, tool, stringArg(fileURL(fx.root+"/hello.txt")))
	if err != nil {
		t.Fatalf("from a root replaced by a directory: %v", err)
	}
	if got := servedData(t, v); got != "the new root" {
		t.Fatalf("served %q, want the new root's file", got)
	}
}

func requireOpenat2(t *testing.T) {
	t.Helper()
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
	if err != nil {
		t.Skipf("openat2 is not available here (%v): only the general path runs", err)
	}
	unix.Close(fd)
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// servedData is the file content of a successful result.
func servedData(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	if err := v.(toolhost.StreamResult).WriteJSON(&buf); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	var res struct{ FileData string }
	if err := json.Unmarshal(buf.Bytes(), &res); err != nil {
		t.Fatalf("result %s: %v", buf.Bytes(), err)
	}
	data, err := base64.StdEncoding.DecodeString(res.FileData)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
