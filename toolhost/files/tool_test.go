//go:build unix

package files

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/toolhost"
)

const testMaxBytes = 256

const testPrivateKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"

// fileFixture is a real tree: a served root, a directory outside it, a
// sibling whose name shares the root's prefix, and a symlink to the root.
type fileFixture struct {
	root, outside, sibling, rootLink string
}

func newFileFixture(t *testing.T) fileFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fx := fileFixture{
		root:     filepath.Join(base, "root"),
		outside:  filepath.Join(base, "outside"),
		sibling:  filepath.Join(base, "root2"),
		rootLink: filepath.Join(base, "rootlink"),
	}
	files := map[string]string{
		"root/hello.txt":                "hello world",
		"root/img.png":                  "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"root/noext":                    "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"root/blob.zzqq":                "\x00\x01\x02\x03\xfe\xff",
		"root/sub/deep.txt":             "deep",
		"root/with space ü.txt":         "unicode name",
		"root/exact.bin":                strings.Repeat("x", testMaxBytes),
		"root/big.bin":                  strings.Repeat("x", testMaxBytes+1),
		"root/empty.txt":                "",
		"root/config.env":               "VCP_Key=secret",
		"root/.env":                     "TOKEN=secret",
		"root/.env.local":               "TOKEN=secret",
		"root/Config.ENV":               "VCP_Key=secret",
		"root/id_rsa":                   "not even a key",
		"root/.ssh/notes.txt":           "harmless words",
		"root/.gnupg/pubring.kbx":       "ring",
		"root/server.pem":               testPrivateKey,
		"root/tls.key":                  "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n",
		"root/notes.txt":                "see below\n" + testPrivateKey,
		"root/cert.pem":                 "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
		"root/deny-me.txt":              "denied by the owner",
		"root/dir/inner.txt":            "inner",
		"outside/secret.txt":            "outside secret",
		"root2/sibling.txt":             "sibling secret",
		"root/a?b.txt":                  "question mark",
		"root/percent%41.txt":           "literal percent",
		"root/caf\u00e9/men\u00fc.html": "<p>menu</p>",
	}
	for rel, content := range files {
		p := filepath.Join(base, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"root/link-out":          fx.outside + "/secret.txt",
		"root/link-dir-out":      fx.outside,
		"root/link-in":           fx.root + "/hello.txt",
		"root/innocent.txt":      fx.root + "/config.env",
		"root/fifo-link":         fx.root + "/fifo",
		"root/devnull":           "/dev/null",
		"outside/link-into-root": fx.root + "/hello.txt",
		"rootlink":               fx.root,
	}
	for rel, target := range links {
		if err := os.Symlink(target, filepath.Join(base, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(fx.root, "fifo"), 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	return fx
}

func (fx fileFixture) tool() toolhost.Tool {
	return NewTool(Options{
		Roots:    []string{fx.root},
		MaxBytes: testMaxBytes,
		Deny:     []string{filepath.Join(fx.root, "deny-me.txt")},
	})
}

// fileURL percent-encodes an absolute path the way a correct client would.
func fileURL(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

func stringArg(s string) map[string]json.RawMessage {
	raw, _ := json.Marshal(s)
	return map[string]json.RawMessage{"fileUrl": raw}
}

// invokeFile calls the tool and fails the test if it does not return within
// a deadline, so a blocking open (a fifo) shows up as a failure, not a hang.
func invokeFile(t *testing.T, tool toolhost.Tool, args map[string]json.RawMessage) (any, error) {
	t.Helper()
	type outcome struct {
		v   any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		v, err := tool.Invoke(context.Background(), toolhost.Call{RequestID: "r1", Args: args})
		done <- outcome{v, err}
	}()
	select {
	case o := <-done:
		return o.v, o.err
	case <-time.After(10 * time.Second):
		t.Fatal("Invoke did not return within 10s")
		return nil, nil
	}
}

func TestFileToolServes(t *testing.T) {
	fx := newFileFixture(t)
	tool := fx.tool()
	tests := []struct {
		name, url, wantData, wantMime string
	}{
		{"plain file", fileURL(fx.root + "/hello.txt"), "hello world", "text/plain"},
		{"nested file", fileURL(fx.root + "/sub/deep.txt"), "deep", "text/plain"},
		{"png by extension", fileURL(fx.root + "/img.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"},
		{"png sniffed without extension", fileURL(fx.root + "/noext"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"},
		{"unknown binary", fileURL(fx.root + "/blob.zzqq"), "\x00\x01\x02\x03\xfe\xff", "application/octet-stream"},
		{"percent-encoded space and unicode", fileURL(fx.root + "/with space ü.txt"), "unicode name", "text/plain"},
		{"raw space and unicode", "file://" + fx.root + "/with space ü.txt", "unicode name", "text/plain"},
		{"unicode directory", fileURL(fx.root + "/café/menü.html"), "<p>menu</p>", "text/html"},
		{"encoded question mark", fileURL(fx.root + "/a?b.txt"), "question mark", "text/plain"},
		{"encoded percent", fileURL(fx.root + "/percent%41.txt"), "literal percent", "text/plain"},
		{"localhost host", "file://localhost" + fx.root + "/hello.txt", "hello world", "text/plain"},
		{"LOCALHOST host", "FILE://LOCALHOST" + fx.root + "/hello.txt", "hello world", "text/plain"},
		{"single-slash form", "file:" + fx.root + "/hello.txt", "hello world", "text/plain"},
		{"dot segments inside root", "file://" + fx.root + "/sub/../hello.txt", "hello world", "text/plain"},
		{"exactly at the cap", fileURL(fx.root + "/exact.bin"), strings.Repeat("x", testMaxBytes), "application/octet-stream"},
		{"symlink inside to inside", fileURL(fx.root + "/link-in"), "hello world", "text/plain"},
		{"symlink outside to inside", fileURL(fx.outside + "/link-into-root"), "hello world", "text/plain"},
		{"path through the root's symlink", fileURL(fx.rootLink + "/hello.txt"), "hello world", "text/plain"},
		{"certificate without a key", fileURL(fx.root + "/cert.pem"), "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", ""},
		{"url with surrounding spaces", "  " + fileURL(fx.root+"/hello.txt") + "\n", "hello world", "text/plain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := invokeFile(t, tool, stringArg(tc.url))
			if err != nil {
				t.Fatalf("Invoke(%q): %v", tc.url, err)
			}
			checkFileResult(t, got, tc.wantData, tc.wantMime)
		})
	}
}

// checkFileResult asserts the exact nested success shape the server checks.
func checkFileResult(t *testing.T, got any, wantData, wantMime string) {
	t.Helper()
	s, ok := got.(toolhost.StreamResult)
	if !ok {
		t.Fatalf("result is %T, want a StreamResult", got)
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	if int64(buf.Len()) > s.MaxBytes() {
		t.Errorf("WriteJSON wrote %d bytes, over its MaxBytes %d", buf.Len(), s.MaxBytes())
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("streamed result %.200s is not JSON: %v", buf.Bytes(), err)
	}
	got = m
	if len(m) != 3 || m["status"] != "success" {
		t.Fatalf("result = %v, want exactly status, fileData, mimeType with status success", m)
	}
	data, err := base64.StdEncoding.DecodeString(m["fileData"].(string))
	if err != nil {
		t.Fatalf("fileData is not standard base64: %v", err)
	}
	if string(data) != wantData {
		t.Errorf("fileData decodes to %q, want %q", data, wantData)
	}
	mimeType, _ := m["mimeType"].(string)
	if wantMime != "" && mimeType != wantMime {
		t.Errorf("mimeType = %q, want %q", mimeType, wantMime)
	}
	if mimeType == "" || strings.Contains(mimeType, ";") {
		t.Errorf("mimeType = %q, want a bare media type", mimeType)
	}
	encoded, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("result does not marshal: %v", err)
	}
	var back struct{ Status, FileData string }
	if err := json.Unmarshal(encoded, &back); err != nil || back.Status != "success" || back.FileData == "" {
		t.Errorf("marshalled result %s lacks status/fileData", encoded)
	}
}

func TestFileToolRefuses(t *testing.T) {
	fx := newFileFixture(t)
	tool := fx.tool()
	tests := []struct {
		name    string
		url     string
		want    error
		mention string   // the error must contain this
		secret  []string // and must not contain any of these
	}{
		{"outside root", fileURL(fx.outside + "/secret.txt"), ErrOutsideRoots, "outside", nil},
		{"missing outside root looks the same", fileURL(fx.outside + "/missing.txt"), ErrOutsideRoots, "outside", nil},
		{"dot-dot traversal", "file://" + fx.root + "/../outside/secret.txt", ErrOutsideRoots, "outside", nil},
		{"encoded dot-dot traversal", "file://" + fx.root + "/%2e%2e/outside/secret.txt", ErrOutsideRoots, "outside", nil},
		{"sibling with the root as prefix", fileURL(fx.sibling + "/sibling.txt"), ErrOutsideRoots, "outside", nil},
		{"symlink inside to outside", fileURL(fx.root + "/link-out"), ErrOutsideRoots, "outside", []string{fx.outside, "secret.txt"}},
		{"through a directory symlink", fileURL(fx.root + "/link-dir-out/secret.txt"), ErrOutsideRoots, "outside", []string{fx.outside}},
		{"missing through a directory symlink", fileURL(fx.root + "/link-dir-out/nope.txt"), ErrOutsideRoots, "outside", []string{fx.outside}},
		{"symlink to a device", fileURL(fx.root + "/devnull"), ErrOutsideRoots, "outside", []string{"/dev/null"}},
		{"missing inside root", fileURL(fx.root + "/missing.txt"), fs.ErrNotExist, "no such file", nil},
		{"config.env", fileURL(fx.root + "/config.env"), ErrSecretFile, "never served", nil},
		{"config.env in another case", fileURL(fx.root + "/Config.ENV"), ErrSecretFile, "never served", nil},
		{".env", fileURL(fx.root + "/.env"), ErrSecretFile, "never served", nil},
		{".env.local", fileURL(fx.root + "/.env.local"), ErrSecretFile, "never served", nil},
		{"id_rsa by name", fileURL(fx.root + "/id_rsa"), ErrSecretFile, "never served", nil},
		{"inside .ssh", fileURL(fx.root + "/.ssh/notes.txt"), ErrSecretFile, ".ssh", nil},
		{"inside .gnupg", fileURL(fx.root + "/.gnupg/pubring.kbx"), ErrSecretFile, ".gnupg", nil},
		{"pem holding a private key", fileURL(fx.root + "/server.pem"), ErrSecretFile, "private key", nil},
		{"key file holding a private key", fileURL(fx.root + "/tls.key"), ErrSecretFile, "private key", nil},
		{"private key under an innocent name", fileURL(fx.root + "/notes.txt"), ErrSecretFile, "private key", nil},
		{"innocent symlink to config.env", fileURL(fx.root + "/innocent.txt"), ErrSecretFile, "never served", []string{"config.env"}},
		{"denied by the owner", fileURL(fx.root + "/deny-me.txt"), ErrSecretFile, "denied", nil},
		{"directory", fileURL(fx.root + "/dir"), ErrNotRegularFile, "directory", nil},
		{"the root itself", fileURL(fx.root), ErrNotRegularFile, "directory", nil},
		{"fifo", fileURL(fx.root + "/fifo"), ErrNotRegularFile, "not a regular file", nil},
		{"symlink to a fifo", fileURL(fx.root + "/fifo-link"), ErrNotRegularFile, "not a regular file", nil},
		{"empty file", fileURL(fx.root + "/empty.txt"), ErrFileEmpty, "file is empty; the server treats an empty file as a failure", nil},
		{"over the cap", fileURL(fx.root + "/big.bin"), ErrFileTooLarge, "257 bytes", nil},
		{"windows drive after slashes", "file:///C:/Users/me/cat.png", ErrWindowsPath, "this node runs " + runtime.GOOS + "; Windows path", nil},
		{"windows drive as host", "file://C:/Users/me/cat.png", ErrWindowsPath, "Windows path", nil},
		{"windows drive, opaque", "file:C:/Users/me/cat.png", ErrWindowsPath, "Windows path", nil},
		{"windows drive encoded colon", "file:///C%3A/Users/me/cat.png", ErrWindowsPath, "Windows path", nil},
		{"windows backslashes", `file:///C:\Users\me\cat.png`, ErrWindowsPath, "Windows path", nil},
		{"encoded backslash", "file:///tmp%5Cx", ErrWindowsPath, "Windows path", nil},
		{"bare windows path", `C:\Users\me\cat.png`, ErrWindowsPath, "Windows path", nil},
		{"bare UNC path", `\\server\share\cat.png`, ErrWindowsPath, "Windows path", nil},
		{"UNC as four slashes", "file:////server/share/cat.png", ErrWindowsPath, "Windows path", nil},
		{"another host", "file://example.com" + fx.root + "/hello.txt", ErrBadFileURL, "another host", nil},
		{"localhost with a port", "file://localhost:80" + fx.root + "/hello.txt", ErrBadFileURL, "another host", nil},
		{"user info", "file://me@" + fx.root + "/hello.txt", ErrBadFileURL, "another host", nil},
		{"http URL", "http://example.com/a.png", ErrBadFileURL, "not a file:// URL", nil},
		{"bare posix path", fx.root + "/hello.txt", ErrBadFileURL, "not a file:// URL", nil},
		{"encoded slash", "file://" + fx.root + "%2Fhello.txt", ErrBadFileURL, "%2F", nil},
		{"encoded NUL", "file://" + fx.root + "/hello.txt%00.png", ErrBadFileURL, "NUL", nil},
		{"bad escape", "file:///tmp/100% done.txt", ErrBadFileURL, "malformed", nil},
		{"query", "file://" + fx.root + "/hello.txt?x=1", ErrBadFileURL, "query or fragment", nil},
		{"fragment", "file://" + fx.root + "/a#b.txt", ErrBadFileURL, "query or fragment", nil},
		{"relative opaque", "file:hello.txt", ErrBadFileURL, "not absolute", nil},
		{"no path", "file://localhost", ErrBadFileURL, "names no file", nil},
		{"filesystem root", "file:///", ErrBadFileURL, "root directory", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := invokeFile(t, tool, stringArg(tc.url))
			if err == nil {
				t.Fatalf("Invoke(%q) = %v, want an error", tc.url, got)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("Invoke(%q) error = %q, want errors.Is %v", tc.url, err, tc.want)
			}
			checkErrorText(t, err, tc.mention, tc.secret)
		})
	}
}

func checkErrorText(t *testing.T, err error, mention string, secret []string) {
	t.Helper()
	msg := err.Error()
	if !strings.Contains(msg, mention) {
		t.Errorf("error %q does not mention %q", msg, mention)
	}
	for _, s := range secret {
		if strings.Contains(msg, s) {
			t.Errorf("error %q leaks %q", msg, s)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q spans lines", msg)
	}
}

func TestFileToolArguments(t *testing.T) {
	fx := newFileFixture(t)
	tool := fx.tool()
	tests := []struct {
		name    string
		args    map[string]json.RawMessage
		mention string
	}{
		{"missing", map[string]json.RawMessage{"other": json.RawMessage(`"x"`)}, "missing argument fileUrl"},
		{"nil args", nil, "missing argument fileUrl"},
		{"number", map[string]json.RawMessage{"fileUrl": json.RawMessage(`42`)}, "must be a string"},
		{"null", map[string]json.RawMessage{"fileUrl": json.RawMessage(`null`)}, "got null"},
		{"object", map[string]json.RawMessage{"fileUrl": json.RawMessage(`{"u":"file:///x"}`)}, "got an object"},
		{"array", map[string]json.RawMessage{"fileUrl": json.RawMessage(`["file:///x"]`)}, "got an array"},
		{"empty string", stringArg(""), "is empty"},
		{"blank string", stringArg(" \t"), "is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := invokeFile(t, tool, tc.args)
			if !errors.Is(err, ErrBadFileURL) {
				t.Fatalf("error = %v, want ErrBadFileURL", err)
			}
			checkErrorText(t, err, tc.mention, nil)
		})
	}
}

func TestFileToolDisabled(t *testing.T) {
	fx := newFileFixture(t)
	missing := filepath.Join(fx.outside, "no-such-root")
	tests := []struct {
		name    string
		opts    Options
		wantMsg string
	}{
		{"no roots", Options{}, "file serving is disabled: [files] roots is empty"},
		{"only unresolvable roots", Options{Roots: []string{missing, "relative/root"}}, "none of the configured [files] roots could be resolved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := invokeFile(t, NewTool(tc.opts), stringArg(fileURL(fx.root+"/hello.txt")))
			if !errors.Is(err, ErrFileServingDisabled) {
				t.Fatalf("error = %v, want ErrFileServingDisabled", err)
			}
			checkErrorText(t, err, tc.wantMsg, []string{missing, "relative/root"})
		})
	}
}

func TestFileToolSkipsBadRoots(t *testing.T) {
	fx := newFileFixture(t)
	missing := filepath.Join(fx.outside, "no-such-root")
	tool := NewTool(Options{Roots: []string{missing, fx.rootLink}})
	got, err := invokeFile(t, tool, stringArg(fileURL(fx.root+"/hello.txt")))
	if err != nil {
		t.Fatalf("a good root beside a bad one: %v", err)
	}
	checkFileResult(t, got, "hello world", "text/plain")
	_, err = invokeFile(t, tool, stringArg(fileURL(fx.outside+"/secret.txt")))
	if !errors.Is(err, ErrOutsideRoots) {
		t.Fatalf("error = %v, want ErrOutsideRoots", err)
	}
	checkErrorText(t, err, "1 configured root(s) could not be resolved", []string{missing})
}

func TestFileToolPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		// File modes do not stop root: run this test again as nobody.
		testuser.Rerun(t, "^TestFileToolPermissionDenied$")
		return
	}
	fx := newFileFixture(t)
	locked := filepath.Join(fx.root, "locked.txt")
	if err := os.WriteFile(locked, []byte("locked"), 0o000); err != nil {
		t.Fatal(err)
	}
	_, err := invokeFile(t, fx.tool(), stringArg(fileURL(locked)))
	if !errors.Is(err, ErrFileUnreadable) || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("error = %v, want ErrFileUnreadable and fs.ErrPermission", err)
	}
	checkErrorText(t, err, "permission denied", nil)
}

func TestFileOptionsValidate(t *testing.T) {
	fx := newFileFixture(t)
	file := filepath.Join(fx.root, "hello.txt")
	missing := filepath.Join(fx.outside, "no-such-root")
	tests := []struct {
		name    string
		opts    Options
		mention []string
	}{
		{"good roots", Options{Roots: []string{fx.root, fx.rootLink}, MaxBytes: 10}, nil},
		{"no roots", Options{}, nil},
		{"every problem at once",
			Options{Roots: []string{"", "rel/dir", missing, file, fx.root}, MaxBytes: -1},
			[]string{"negative", "empty string", `"rel/dir" is not an absolute path`, missing, file + `" is not a directory`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if len(tc.mention) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate() = nil, want errors")
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("Validate() = %q, does not mention %q", err, m)
				}
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Validate() = %v, want the missing root's fs.ErrNotExist kept", err)
			}
		})
	}
}

func TestScanServedFileStopsAFileThatGrows(t *testing.T) {
	// The cap is 50 bytes; the file now holds 100.
	grown := bytes.NewReader(bytes.Repeat([]byte("y"), 100))
	if _, _, _, err := scanServedFile(context.Background(), grown, 50); !errors.Is(err, errGrewPastCap) {
		t.Fatalf("scanServedFile error = %v, want errGrewPastCap", err)
	}
	// A file under the cap is measured whole, its head kept for sniffing.
	size, head, key, err := scanServedFile(context.Background(), bytes.NewReader(bytes.Repeat([]byte("y"), 40)), 50)
	if err != nil || size != 40 || len(head) != 40 || key {
		t.Fatalf("scanServedFile = %d, %d head bytes, key %v, %v; want 40, 40, false", size, len(head), key, err)
	}
}

func TestScanServedFileHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := scanServedFile(ctx, bytes.NewReader([]byte("data")), 50); !errors.Is(err, context.Canceled) {
		t.Fatalf("scanServedFile error = %v, want context.Canceled", err)
	}
}

// A key block that straddles two chunks is still found, by the scan and by
// the stream.
func TestPrivateKeyAcrossChunksIsFound(t *testing.T) {
	// The first chunk fills the buffer; later ones follow the kept tail.
	second, third := scanChunk, 2*scanChunk-keyOverlap
	fourth := third + scanChunk - keyOverlap
	for _, at := range []int{second - 5, second - 20, second + 3, third - 30, fourth - 11} {
		data := append(bytes.Repeat([]byte("a"), at), "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n"...)
		data = append(data, bytes.Repeat([]byte("z"), scanChunk)...)
		if _, _, key, err := scanServedFile(context.Background(), bytes.NewReader(data), 1<<30); err != nil || !key {
			t.Errorf("key at %d: scan found %v (%v)", at, key, err)
		}
		k := newChunkScanner()
		found, read := false, 0
		for r := bytes.NewReader(data); ; {
			chunk, key, err := k.read(r)
			found, read = found || key, read+len(chunk)
			if err != nil {
				break
			}
		}
		k.release()
		if !found || read != len(data) {
			t.Errorf("key at %d: chunked scanner found %v after reading %d of %d bytes", at, found, read, len(data))
		}
	}
}

// A file that gains a private key after it was checked fails the stream
// before the key is written.
func TestFileStreamRefusesAKeyThatAppeared(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "changing.txt")
	clean := bytes.Repeat([]byte("x"), 3*scanChunk)
	if err := os.WriteFile(p, clean, 0o644); err != nil {
		t.Fatal(err)
	}
	tool := NewTool(Options{Roots: []string{dir}})
	v, err := tool.Invoke(context.Background(), toolhost.Call{RequestID: "r", Args: stringArg(fileURL(p))})
	if err != nil {
		t.Fatal(err)
	}
	dirty := append(bytes.Repeat([]byte("x"), 2*scanChunk), "-----BEGIN RSA PRIVATE KEY-----\nMIIE"...)
	if err := os.WriteFile(p, append(dirty, clean[len(dirty):]...), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = v.(toolhost.StreamResult).WriteJSON(&out)
	if !errors.Is(err, errKeyAppeared) {
		t.Fatalf("WriteJSON = %v, want errKeyAppeared", err)
	}
	if bytes.Contains(out.Bytes(), []byte(base64.StdEncoding.EncodeToString([]byte("PRIVATE KEY")))[:8]) {
		t.Error("part of the key block was written")
	}
}

func TestMaxFileBytesFor(t *testing.T) {
	encodedFrame := func(n int64) int64 { return int64(base64.StdEncoding.EncodedLen(int(n))) + fileEnvelopeBytes }
	for _, frame := range []int64{0, fileEnvelopeBytes, fileEnvelopeBytes + 3, fileEnvelopeBytes + 4, fileEnvelopeBytes + 7, 1 << 20, 100 << 20, 100<<20 + 1, 100<<20 + 2} {
		n := MaxBytesFor(frame)
		if n < 0 {
			t.Errorf("MaxBytesFor(%d) = %d, negative", frame, n)
			continue
		}
		if n > 0 && encodedFrame(n) > frame {
			t.Errorf("MaxBytesFor(%d) = %d, whose frame needs %d bytes", frame, n, encodedFrame(n))
		}
		if encodedFrame(n+1) <= frame {
			t.Errorf("MaxBytesFor(%d) = %d, but %d bytes would fit too", frame, n, n+1)
		}
	}
	if DefaultMaxBytes > MaxBytesFor(100<<20) {
		t.Errorf("DefaultMaxBytes %d does not fit the server's 100 MiB frame", DefaultMaxBytes)
	}
}

func TestFileToolSpec(t *testing.T) {
	spec := NewTool(Options{}).Spec()
	if spec.Name != "internal_request_file" || !spec.Builtin || !spec.Implicit || spec.Timeout != 60*time.Second {
		t.Fatalf("Spec() = %+v, want internal_request_file, builtin, implicit, 60s", spec)
	}
}

func FuzzPathFromFileURL(f *testing.F) {
	for _, seed := range []string{"file:///tmp/a.txt", "file://localhost/a%20b", "file:///C:/x", "file:////s/x", "file:///a/../../b", "file:///%2e%2e/x", "file:x", "file:///a%2Fb"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := pathFromFileURL(raw)
		if err != nil {
			if !errors.Is(err, ErrBadFileURL) && !errors.Is(err, ErrWindowsPath) {
				t.Fatalf("pathFromFileURL(%q) error %v has no reason sentinel", raw, err)
			}
			return
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			t.Fatalf("pathFromFileURL(%q) = %q, not a clean absolute file path", raw, p)
		}
		if strings.ContainsAny(p, "\x00\\") {
			t.Fatalf("pathFromFileURL(%q) = %q holds a NUL or backslash", raw, p)
		}
	})
}

// BenchmarkFileTool serves a file the way the session does: Invoke, then
// the StreamResult written into a writer (io.Discard standing in for the
// WebSocket frame writer). B/op is everything the tool allocates beyond
// what that writer does.
func BenchmarkFileTool(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20, 10 << 20} {
		name := fmt.Sprintf("%dMiB", size>>20)
		if size < 1<<20 {
			name = fmt.Sprintf("%dKiB", size>>10)
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			p := filepath.Join(dir, "file.bin")
			content := bytes.Repeat([]byte("0123456789abcdef"), size/16)
			if err := os.WriteFile(p, content, 0o644); err != nil {
				b.Fatal(err)
			}
			tool := NewTool(Options{Roots: []string{dir}, MaxBytes: 16 << 20})
			call := toolhost.Call{RequestID: "bench", Args: stringArg(fileURL(p))}
			b.SetBytes(int64(len(content)))
			b.ReportAllocs()
			for b.Loop() {
				v, err := tool.Invoke(context.Background(), call)
				if err != nil {
					b.Fatal(err)
				}
				if err := v.(toolhost.StreamResult).WriteJSON(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
