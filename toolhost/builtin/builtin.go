// Package builtin holds the node's workspace tools: DirectoryTree, ReadFile,
// SearchFiles and WriteFile. They reach only inside the [files] roots, under
// the same symlink, deny-list and secret rules as internal_request_file, and
// bound their work so that a huge tree cannot stall the node.
package builtin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/toolhost/schema"
)

// Tool names, as the server and exposed_tools see them.
const (
	DirectoryTreeName = "DirectoryTree"
	ReadFileName      = "ReadFile"
	SearchFilesName   = "SearchFiles"
	WriteFileName     = "WriteFile"
)

// toolTimeout is each tool's declared timeout; the walks also stop on their
// own budgets long before it on any sane tree.
const toolTimeout = 30 * time.Second

// New returns the workspace tools reaching files through access; WriteFile
// leaves no file over writeMaxBytes (0: DefaultWriteMaxBytes). They are
// built-in: the server sees them only when the config exposes them.
func New(access *files.Access, writeMaxBytes int64) []toolhost.Tool {
	if writeMaxBytes <= 0 {
		writeMaxBytes = DefaultWriteMaxBytes
	}
	return []toolhost.Tool{
		&treeTool{access: access},
		&readTool{access: access},
		&searchTool{access: access},
		&writeTool{access: access, maxBytes: writeMaxBytes},
	}
}

// spec fills the parts every workspace tool shares. The command's
// description and example are generated from its schema (toolhost).
// snakeNames are the names other tool schemes give the workspace tools; calls may
// use them (toolhost.Spec.Aliases).
var snakeNames = map[string][]string{
	DirectoryTreeName: {"list_directory"},
	ReadFileName:      {"read_file"},
	SearchFilesName:   {"search_files"},
	WriteFileName:     {"write_file"},
}

func spec(name, display, desc string, params []schema.Param) toolhost.Spec {
	return toolhost.Spec{
		Name:               name,
		Aliases:            snakeNames[name],
		DisplayName:        display,
		Version:            "1.0.0",
		Description:        desc,
		Commands:           []toolhost.Command{{Command: name, Schema: &schema.Schema{Params: params}}},
		Timeout:            toolTimeout,
		Source:             "builtin",
		Builtin:            true,
		DistributedExposed: true,
	}
}

// target is a path argument checked against the roots.
type target struct {
	requested string // as the caller named it, for messages
	resolved  string // symlink-free, inside root
	root      string // the resolved root holding resolved
}

// resolveTarget checks the path argument p. An absolute path (or file://
// URL) must lie in a root; a relative one is looked up under each root in
// order and the first root where it exists wins; "" means the first root.
func resolveTarget(access *files.Access, p string) (target, error) {
	if err := access.Ready(); err != nil {
		return target{}, err
	}
	roots := access.Roots()
	p = strings.TrimSpace(p)
	if p == "" {
		return checkTarget(access, roots[0])
	}
	p, err := files.LocalPath(p)
	if err != nil {
		return target{}, err
	}
	if strings.ContainsRune(p, 0) {
		return target{}, files.Refusal(files.ErrOutsideRoots, p, "the path holds a NUL byte")
	}
	if filepath.IsAbs(p) {
		return checkTarget(access, p)
	}
	var first error
	for _, root := range roots {
		t, err := checkTarget(access, filepath.Join(root, p))
		if err == nil {
			return t, nil
		}
		if first == nil {
			first = err
		}
	}
	return target{}, first
}

// everyRoot is the targets of a call without a path: each root, checked as
// a requested path would be (a root inside .ssh is still refused).
func everyRoot(access *files.Access) ([]target, error) {
	if err := access.Ready(); err != nil {
		return nil, err
	}
	var targets []target
	for _, root := range access.Roots() {
		t, err := checkTarget(access, root)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// walkTargets is where a walking tool starts: each root when path is
// blank, else the one target path names.
func walkTargets(access *files.Access, path string) ([]target, error) {
	if strings.TrimSpace(path) == "" {
		return everyRoot(access)
	}
	tg, err := resolveTarget(access, path)
	if err != nil {
		return nil, err
	}
	return []target{tg}, nil
}

func checkTarget(access *files.Access, p string) (target, error) {
	p = filepath.Clean(p)
	resolved, err := access.Resolve(p)
	if err != nil {
		return target{}, err
	}
	// Resolve succeeded, so the path exists; Lstat errors here are races.
	info, err := os.Lstat(resolved)
	if err != nil {
		return target{}, files.Unreadable(p, err)
	}
	// Resolve judges files; a walk must not start in a folder (.ssh…)
	// whose files it would refuse one by one.
	if info.IsDir() && access.Withheld(filepath.Dir(resolved), filepath.Base(resolved), true) {
		return target{}, files.Refusal(files.ErrSecretFile, p, "the files in it hold secrets and are never served")
	}
	return target{requested: p, resolved: resolved, root: access.RootOf(resolved)}, nil
}

// rel splits the path of p below root into components ("" root → none).
func rel(root, p string) []string {
	r, err := filepath.Rel(root, p)
	if err != nil || r == "." {
		return nil
	}
	return strings.Split(filepath.ToSlash(r), "/")
}

// requireDir refuses a target that is not a directory.
func requireDir(t target) error {
	info, err := os.Stat(t.resolved)
	if err != nil {
		return files.Unreadable(t.requested, err)
	}
	if !info.IsDir() {
		return files.Refusal(ErrNotDirectory, t.requested, "it is a file, not a directory")
	}
	return nil
}

// Reasons particular to these tools; the others are toolhost's file errors
// (ErrOutsideRoots, ErrSecretFile, ErrFileUnreadable…).
var (
	ErrBinaryFile   = errors.New("binary file")
	ErrNotDirectory = errors.New("not a directory")
	ErrBadArgument  = errors.New("bad argument")
	ErrWriteFailed  = errors.New("file cannot be written")
)

// plural writes "1 file" or "3 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
