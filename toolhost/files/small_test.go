//go:build unix

package files

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost"
)

// Files on either side of smallFileBytes, read whole or streamed, give the
// same bytes: the exact JSON the streamed path writes.
func TestSmallAndStreamedResultsAgree(t *testing.T) {
	dir := t.TempDir()
	tool := NewTool(Options{Roots: []string{dir}})
	for _, size := range []int{1, 2, 3, 1000, 4095, 4096, smallFileBytes - 1, smallFileBytes, smallFileBytes + 1, 3*scanChunk + 7} {
		data := make([]byte, size)
		rand.Read(data)
		p := filepath.Join(dir, "f.txt")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := invokeFile(t, tool, stringArg(fileURL(p)))
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		_, small := v.(*smallResult)
		if small != (size <= smallFileBytes) {
			t.Errorf("%d bytes: served as %T", size, v)
		}
		var got bytes.Buffer
		if err := v.(toolhost.StreamResult).WriteJSON(&got); err != nil {
			t.Fatalf("%d bytes: WriteJSON: %v", size, err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		stream := &fileStream{f: f, size: int64(size), mimeType: "text/plain"}
		if err := stream.WriteJSON(&want); err != nil {
			t.Fatalf("%d bytes: streamed WriteJSON: %v", size, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%d bytes: served %.80s…, streamed %.80s…", size, got.Bytes(), want.Bytes())
		}
		if int64(got.Len()) != v.(toolhost.StreamResult).MaxBytes() && small {
			t.Errorf("%d bytes: wrote %d, MaxBytes says %d", size, got.Len(), v.(toolhost.StreamResult).MaxBytes())
		}
	}
}

// A file larger than it was measured is handed to the streamed path, and
// one that grew past the cap is refused, whatever the measurement said.
func TestSmallPathNoticesGrowth(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "grown.txt")
	if err := os.WriteFile(p, bytes.Repeat([]byte("g"), 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func() *os.File {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	tool := NewTool(Options{Roots: []string{dir}}).(*fileTool)
	// Measured at 10 bytes, the buffer holds 4 KiB: the file fills it.
	if res, done, err := tool.serveSmall(context.Background(), open(), p, p, 10); done || res != nil || err != nil {
		t.Fatalf("serveSmall = %v, %v, %v; want not done", res, done, err)
	}
	capped := NewTool(Options{Roots: []string{dir}, MaxBytes: 4500}).(*fileTool)
	if _, done, err := capped.serveSmall(context.Background(), open(), p, p, 4200); !done || !errors.Is(err, ErrFileTooLarge) {
		t.Fatalf("serveSmall over the cap = %v, %v; want ErrFileTooLarge", done, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, done, err := tool.serveSmall(ctx, open(), p, p, 5000); !done || !errors.Is(err, context.Canceled) {
		t.Fatalf("serveSmall cancelled = %v, %v; want context.Canceled", done, err)
	}
}

// Buffers come back in their class and are reused, not grown.
func TestBufferClasses(t *testing.T) {
	for _, tc := range []struct{ n, class int }{{0, 0}, {1, 0}, {4096, 0}, {4097, 1}, {1 << 18, 6}, {1<<18 + 1, -1}} {
		if got := classOf(tc.n); got != tc.class {
			t.Errorf("classOf(%d) = %d, want %d", tc.n, got, tc.class)
		}
	}
	b := getBuf(5000)
	if cap(*b) != 8192 || len(*b) != 0 {
		t.Fatalf("getBuf(5000) = len %d cap %d, want 0, 8192", len(*b), cap(*b))
	}
	putBuf(b)
	if big := getBuf(1 << 20); cap(*big) < 1<<20 {
		t.Fatalf("getBuf(1 MiB) has cap %d", cap(*big))
	}
}

// within compares whole components: /srv/root2 is not inside /srv/root.
func TestWithinComparesWholeComponents(t *testing.T) {
	for _, tc := range []struct {
		dir, p string
		want   bool
	}{
		{"/srv/root", "/srv/root", true},
		{"/srv/root", "/srv/root/a.txt", true},
		{"/srv/root", "/srv/root/sub/a.txt", true},
		{"/srv/root", "/srv/root2", false},
		{"/srv/root", "/srv/root2/a.txt", false},
		{"/srv/root", "/srv/roo", false},
		{"/srv/root", "/srv", false},
		{"/", "/etc/passwd", true},
		{"/", "/", true},
	} {
		if got := within(tc.dir, tc.p); got != tc.want {
			t.Errorf("within(%q, %q) = %v, want %v", tc.dir, tc.p, got, tc.want)
		}
	}
}
