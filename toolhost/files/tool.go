package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// ToolName is the fixed name the server calls to pull a file from a node
// (protocol.md §2.3.4). It is never registered.
const ToolName = "internal_request_file"

// fileToolTimeout matches the server's own 60 s wait for a file.
const fileToolTimeout = 60 * time.Second

// DefaultMaxBytes is the file size cap when Options.MaxBytes is zero.
// Its base64 form still fits in the server's 100 MiB frame limit.
const DefaultMaxBytes int64 = 64 << 20

// fileEnvelopeBytes is room for everything in a tool_result frame besides the
// base64 data: envelope, requestId, status, mimeType.
const fileEnvelopeBytes = 64 << 10

// Options configures internal_request_file.
type Options struct {
	// Roots are the directories files may be served from; empty disables serving.
	Roots []string
	// MaxBytes caps the size of a served file; zero means DefaultMaxBytes.
	MaxBytes int64
	// Deny lists files or directories never served even inside a root, such
	// as the node's own config and key files.
	Deny []string
}

// MaxBytesFor returns the largest file whose base64 encoding, plus room
// for the rest of the tool_result frame, fits in a frame of frameLimit bytes.
func MaxBytesFor(frameLimit int64) int64 {
	room := frameLimit - fileEnvelopeBytes
	if room < 4 {
		return 0
	}
	// Standard base64 turns every 3 bytes (or a final partial group) into 4 characters.
	return room / 4 * 3
}

// ResultBytes is the largest result internal_request_file produces for
// files of up to maxFile bytes: the base64 of the file plus the envelope.
func ResultBytes(maxFile int64) int {
	return int((maxFile+2)/3*4 + fileEnvelopeBytes)
}

// Validate reports every problem with the options at once: roots that are
// not absolute, do not exist, are not directories or cannot be resolved, and
// a negative size cap. It touches the file system but reads no file.
func (o Options) Validate() error {
	var errs []error
	if o.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("file size cap %d is negative; use 0 for the default or a positive number of bytes", o.MaxBytes))
	}
	for _, root := range o.Roots {
		if _, err := resolveRoot(root); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// resolveRoot turns a configured root into its symlink-free form.
func resolveRoot(root string) (string, error) {
	if root == "" {
		return "", errors.New("file root is an empty string; remove it or name a directory")
	}
	if !filepath.IsAbs(root) {
		return "", fmt.Errorf("file root %q is not an absolute path", root)
	}
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("file root %q cannot be resolved: %w", root, err)
	}
	info, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("file root %q: %w", root, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("file root %q is not a directory", root)
	}
	return filepath.Clean(resolved), nil
}

// fileTool serves files from allow-listed roots.
type fileTool struct {
	roots      []string // resolved, symlink-free
	badRoots   int      // configured roots that could not be resolved
	configured bool     // at least one root was configured
	deny       []string // resolved where possible, else cleaned
	maxBytes   int64
}

// NewTool builds internal_request_file. Roots are resolved now; a root
// that cannot be resolved is skipped (Validate reports it with its path) and
// calls that would need it fail with an error that names no path.
func NewTool(opts Options) toolhost.Tool {
	t := &fileTool{maxBytes: opts.MaxBytes, configured: len(opts.Roots) > 0}
	if t.maxBytes <= 0 {
		t.maxBytes = DefaultMaxBytes
	}
	for _, root := range opts.Roots {
		resolved, err := resolveRoot(root)
		if err != nil {
			t.badRoots++
			continue
		}
		t.roots = append(t.roots, resolved)
	}
	for _, d := range opts.Deny {
		if d == "" {
			continue
		}
		if resolved, err := filepath.EvalSymlinks(d); err == nil {
			d = resolved
		}
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		t.deny = append(t.deny, filepath.Clean(d))
	}
	return t
}

func (t *fileTool) Spec() toolhost.Spec {
	return toolhost.Spec{
		Name:               ToolName,
		DisplayName:        "Internal file request",
		Version:            "1.0.0",
		Description:        "Sends the main server a file from this node's configured roots when it meets a file:// URL it does not have.",
		Timeout:            fileToolTimeout,
		Source:             "builtin",
		Builtin:            true,
		DistributedExposed: true,
		Implicit:           true,
		MaxResultBytes:     ResultBytes(t.maxBytes),
	}
}

// Invoke serves args["fileUrl"]. The success value is a StreamResult of
// exactly the nested shape the server checks: status "success", non-empty
// fileData, mimeType.
func (t *fileTool) Invoke(ctx context.Context, call toolhost.Call) (any, error) {
	if !ServingSupported {
		return nil, fileErr(ErrFileServingDisabled, nil, "file serving is not supported on %s", runtime.GOOS)
	}
	if !t.configured {
		return nil, ErrFileServingDisabled
	}
	if len(t.roots) == 0 {
		return nil, fileErr(ErrFileServingDisabled, nil, "file serving is unavailable: none of the configured [files] roots could be resolved; the node's owner should check its config")
	}
	rawURL, err := fileURLArg(call.Args)
	if err != nil {
		return nil, err
	}
	requested, err := pathFromFileURL(rawURL)
	if err != nil {
		return nil, err
	}
	if d, ok := t.openDirect(requested); ok {
		if d.size <= smallFileBytes {
			res, done, err := t.serveSmall(ctx, d, requested, requested, d.size)
			if done {
				d.Close()
				return res, err
			}
		}
		// Too large to hold, or it grew past the small size since it was measured: stream it.
		f, err := d.osFile()
		if err != nil {
			d.Close()
			return nil, unreadable(requested, err)
		}
		return t.serveStreamed(ctx, f, requested, requested)
	}
	resolved, err := t.resolve(requested)
	if err != nil {
		return nil, err
	}
	f, size, err := openServedFile(requested, resolved, t.maxBytes)
	if err != nil {
		return nil, err
	}
	if size <= smallFileBytes {
		if res, done, err := t.serveSmall(ctx, f, requested, resolved, size); done {
			f.Close()
			return res, err
		}
		// It grew past the small size since it was measured: stream it.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, unreadable(requested, err)
		}
	}
	return t.serveStreamed(ctx, f, requested, resolved)
}

// serveStreamed scans f from its start and returns it as a stream, which
// closes it; f is closed here if it cannot be served.
func (t *fileTool) serveStreamed(ctx context.Context, f *os.File, requested, resolved string) (any, error) {
	// First pass: size, type and secrets, holding at most a chunk. The
	// content is read again, chunk by chunk, while it is written out.
	size, head, key, err := scanServedFile(ctx, f, t.maxBytes)
	if err := t.checkScanned(ctx, requested, size, key, err); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, unreadable(requested, err)
	}
	return &fileStream{f: f, size: size, mimeType: mimeTypeOf(requested, resolved, head)}, nil
}

// checkScanned turns a scan's findings into the refusal the caller gets:
// grown past the cap, unreadable, cancelled, empty or holding a key.
func (t *fileTool) checkScanned(ctx context.Context, requested string, size int64, key bool, err error) error {
	switch {
	case errors.Is(err, errGrewPastCap):
		err = refusal(ErrFileTooLarge, requested, fmt.Sprintf("it grew past this node's limit of %d bytes while being read", t.maxBytes))
	case err != nil && ctx.Err() != nil:
		err = fmt.Errorf("reading %s: %w", quotePath(requested), err)
	case err != nil:
		err = unreadable(requested, err)
	case size == 0:
		err = refusal(ErrFileEmpty, requested, ErrFileEmpty.Error())
	case key:
		err = refusal(ErrSecretFile, requested, "it holds a private key")
	}
	return err
}

// fileURLArg extracts the fileUrl argument, which must be a JSON string.
func fileURLArg(args map[string]json.RawMessage) (string, error) {
	raw, ok := args["fileUrl"]
	if !ok {
		return "", fileErr(ErrBadFileURL, nil, "missing argument fileUrl (a file:// URL)")
	}
	// Unmarshal alone would accept null as an empty string.
	if kind := schema.JSONKind(raw); kind != "a string" {
		return "", fileErr(ErrBadFileURL, nil, "argument fileUrl must be a string holding a file:// URL, got %s", kind)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fileErr(ErrBadFileURL, err, "argument fileUrl is not a valid JSON string")
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fileErr(ErrBadFileURL, nil, "argument fileUrl is empty; expected a file:// URL")
	}
	return s, nil
}

// resolve resolves symlinks in requested and checks the result against the
// roots, the deny list and the secret rules. Its errors never say anything
// about the file system outside the roots: a path that is missing there and
// one that exists there get the same answer.
func (t *fileTool) resolve(requested string) (string, error) {
	if reason := secretReason(requested); reason != "" {
		return "", refusal(ErrSecretFile, requested, reason)
	}
	resolved, err := filepath.EvalSymlinks(requested)
	if err != nil {
		if !t.inRoots(nearestResolvedAncestor(requested)) {
			return "", refusal(ErrOutsideRoots, requested, t.outsideReason())
		}
		return "", unreadable(requested, err)
	}
	if err := t.checkResolved(requested, resolved); err != nil {
		return "", err
	}
	return resolved, nil
}

// checkResolved applies the roots, the deny list and the secret rules to
// resolved, the symlink-free form of requested.
func (t *fileTool) checkResolved(requested, resolved string) error {
	if !t.inRoots(resolved) {
		return refusal(ErrOutsideRoots, requested, t.outsideReason())
	}
	for _, d := range t.deny {
		if within(d, resolved) {
			return refusal(ErrSecretFile, requested, "the node's owner has denied it")
		}
	}
	if secretReason(resolved) != "" {
		// Say only that the link's target is off limits, not what it is.
		return refusal(ErrSecretFile, requested, "it links to a file that holds secrets, which is never served")
	}
	return nil
}

// openDirect opens requested on the direct path (open_linux.go) when the
// checks resolve makes pass for it as it is, taken as its own symlink-free
// form: the direct open then succeeds only if that is what it is.
func (t *fileTool) openDirect(requested string) (*directFile, bool) {
	if secretReason(requested) != "" || t.checkResolved(requested, requested) != nil {
		return nil, false
	}
	return openDirect(requested, t.maxBytes)
}

func (t *fileTool) outsideReason() string {
	if t.badRoots > 0 {
		return fmt.Sprintf("it is outside the directories this node serves (%d configured root(s) could not be resolved)", t.badRoots)
	}
	return "it is outside the directories this node serves"
}

func (t *fileTool) inRoots(p string) bool {
	if p == "" {
		return false
	}
	for _, root := range t.roots {
		if within(root, p) {
			return true
		}
	}
	return false
}

// within reports whether p is dir itself or below it; both must be clean and
// absolute. Comparing whole components keeps /srv/root2 out of /srv/root.
func within(dir, p string) bool {
	if !strings.HasPrefix(p, dir) {
		return false
	}
	// Compared in place: this runs for every root and deny entry of every call.
	return len(p) == len(dir) || strings.HasSuffix(dir, string(filepath.Separator)) || p[len(dir)] == filepath.Separator
}

// nearestResolvedAncestor resolves the deepest existing directory above p, so
// a failed lookup can be attributed to a place inside or outside the roots.
func nearestResolvedAncestor(p string) string {
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		if resolved, err := filepath.EvalSymlinks(dir); err == nil {
			return resolved
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
	}
}

// mimeTypeOf picks a MIME type by extension (requested name first, then the
// resolved one), else by sniffing. Parameters such as charset are dropped:
// the server uses the value as a bare type, as Node's mime-types does.
func mimeTypeOf(requested, resolved string, data []byte) string {
	for _, name := range []string{requested, resolved} {
		if ext := filepath.Ext(name); ext != "" {
			if typ := bareMediaType(mime.TypeByExtension(ext)); typ != "" {
				return typ
			}
		}
	}
	if typ := bareMediaType(http.DetectContentType(data)); typ != "" {
		return typ
	}
	return "application/octet-stream"
}

func bareMediaType(typ string) string {
	if typ == "" {
		return ""
	}
	media, _, err := mime.ParseMediaType(typ)
	if err != nil {
		return ""
	}
	return media
}
