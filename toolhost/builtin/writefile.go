package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// DefaultWriteMaxBytes caps the file WriteFile leaves behind when New is
// given no cap.
const DefaultWriteMaxBytes = 1 << 20

// writeTimeout leaves the owner the whole default approval wait (WriteFile
// asks by default) and some time to write after it.
const writeTimeout = toolhost.DefaultApprovalTimeout + 30*time.Second

type writeTool struct {
	access   *files.Access
	maxBytes int64
}

func (t *writeTool) Spec() toolhost.Spec {
	s := spec(WriteFileName, "Write file",
		"Writes a text file of this node, or appends to one, inside its file roots. The file is replaced at once: "+
			"a reader sees the old content or the new, never a mix. Missing folders are created.",
		[]schema.Param{
			{Name: "path", Type: schema.TypeString, Required: true, Description: "File to write: an absolute path or file:// URL, or a path relative to this node's file roots."},
			{Name: "content", Type: schema.TypeString, Required: true, Description: "The text to write (no NUL bytes)."},
			{Name: "append", Type: schema.TypeBoolean, Default: jsonFalse, Description: "Add content at the end of the file instead of replacing it; default false."},
		})
	s.Timeout = writeTimeout
	s.Approval = toolhost.ApprovalAsk
	return s
}

func (t *writeTool) Invoke(ctx context.Context, call toolhost.Call) (any, error) {
	p, err := argString(call.Args, "path")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p) == "" {
		return nil, fmt.Errorf("%w: path is required: the file to write", ErrBadArgument)
	}
	if _, ok := call.Args["content"]; !ok {
		return nil, fmt.Errorf("%w: content is required: the text to write (an empty string empties the file)", ErrBadArgument)
	}
	content, err1 := argString(call.Args, "content")
	appending, err2 := argBool(call.Args, "append", false)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	tg, isNew, err := resolveWriteTarget(t.access, p)
	if err != nil {
		return nil, err
	}
	if err := checkContent(tg.requested, content, t.maxBytes); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("writing %s stopped: %w", quote(tg.requested), context.Cause(ctx))
	}
	return writeAtomic(tg, isNew, []byte(content), appending, t.maxBytes)
}

// checkContent refuses what WriteFile never writes: binary data, a private
// key, or more than the cap. (The content is a decoded JSON string, so it is
// valid UTF-8 already.)
func checkContent(name, content string, maxBytes int64) error {
	switch {
	case int64(len(content)) > maxBytes:
		return writeRefusal(files.ErrFileTooLarge, name, fmt.Sprintf("the content is %d bytes, over this node's limit of %d bytes for a written file", len(content), maxBytes))
	case strings.IndexByte(content, 0) >= 0:
		return writeRefusal(ErrBinaryFile, name, "the content holds a NUL byte; WriteFile writes text only")
	case files.HasPrivateKeyBlock([]byte(content)):
		return writeRefusal(files.ErrSecretFile, name, "the content holds a private key, which this node never writes")
	}
	return nil
}

// resolveWriteTarget checks the path argument p for writing. A file that
// exists anywhere in the roots is checked as ReadFile checks it (symlinks
// resolved, the deny list, secret names); a new one is placed under its
// nearest existing folder, which must pass the same checks, and every
// missing name below it must be one the node could serve. isNew is true when
// the file does not exist yet; tg.resolved is then where it will be.
func resolveWriteTarget(access *files.Access, p string) (tg target, isNew bool, err error) {
	tg, err = resolveTarget(access, p)
	if err == nil {
		return tg, false, nil
	}
	if !absent(err) {
		return target{}, false, err
	}
	// resolveTarget has checked the form of p and that roots exist.
	p, _ = files.LocalPath(strings.TrimSpace(p))
	requested := filepath.Clean(p)
	if !filepath.IsAbs(requested) {
		requested = filepath.Join(access.Roots()[0], requested)
	}
	var missing []string
	dir := requested
	for {
		missing = append(missing, filepath.Base(dir))
		dir = filepath.Dir(dir)
		parent, err := checkTarget(access, dir)
		if absent(err) && dir != filepath.Dir(dir) {
			continue
		}
		if err != nil {
			return target{}, false, err
		}
		if err := requireDir(parent); err != nil {
			return target{}, false, writeRefusal(ErrNotDirectory, requested, fmt.Sprintf("%s is a file, not a folder", quote(parent.requested)))
		}
		resolved := parent.resolved
		for i := len(missing) - 1; i >= 0; i-- {
			if access.Withheld(resolved, missing[i], i > 0) {
				return target{}, false, writeRefusal(files.ErrSecretFile, requested, "its name says it holds secrets or belongs to the node itself; it is never written")
			}
			resolved = filepath.Join(resolved, missing[i])
		}
		return target{requested: requested, resolved: resolved, root: parent.root}, true, nil
	}
}

// absent reports whether a check failed because the path does not exist,
// or because a file stands where a folder of it would be.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// refusedWrite is an error of the form "cannot write PATH: reason" that
// wraps its kind (files.ErrSecretFile, ErrBinaryFile…) for errors.Is.
type refusedWrite struct {
	msg  string
	kind error
}

func (e *refusedWrite) Error() string { return e.msg }
func (e *refusedWrite) Unwrap() error { return e.kind }

func writeRefusal(kind error, requested, reason string) error {
	return &refusedWrite{msg: fmt.Sprintf("cannot write %s: %s", quote(requested), reason), kind: kind}
}
