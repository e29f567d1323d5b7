package builtin

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vcpnode/vcpnode/toolhost/files"
)

// writeAtomic writes data to the checked target tg (isNew: it does not exist
// yet), after the file's old content when appending. The new content goes
// to a temporary file in the same folder, is synced, and is renamed over the
// target, so a reader or a crash sees the old file or the new, never half of
// one; the rename also replaces a hard link rather than writing through it.
// Every step goes through an os.Root of tg's root, so a symlink swapped in
// after the checks cannot lead outside it.
func writeAtomic(tg target, isNew bool, data []byte, appending bool, maxBytes int64) (string, error) {
	relPath, err := filepath.Rel(tg.root, tg.resolved)
	if err != nil || relPath == "." {
		return "", writeRefusal(ErrNotDirectory, tg.requested, "it is a root folder, not a file")
	}
	root, err := os.OpenRoot(tg.root)
	if err != nil {
		return "", files.Unreadable(tg.requested, err)
	}
	defer root.Close()
	dir := filepath.Dir(relPath)

	var old []byte
	var oldInfo os.FileInfo
	var note string
	if isNew {
		if _, err := root.Stat(dir); err != nil {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return "", writeFailed(tg.requested, err)
			}
			note = fmt.Sprintf(" (and its folder %s)", quote(filepath.Join(tg.root, dir)))
		}
	} else {
		old, oldInfo, err = readOld(tg, len(data), appending, maxBytes)
		if err != nil {
			return "", err
		}
	}

	tmp, err := createTemp(root, relPath, oldInfo)
	if err != nil {
		return "", writeFailed(tg.requested, err)
	}
	tmpName := filepath.Join(dir, filepath.Base(tmp.Name()))
	if err := fillTemp(tmp, oldInfo, old, data); err != nil {
		root.Remove(tmpName)
		return "", writeFailed(tg.requested, err)
	}
	if err := root.Rename(tmpName, relPath); err != nil {
		root.Remove(tmpName)
		return "", writeFailed(tg.requested, err)
	}
	// The rename is durable once the folder is synced.
	if d, err := root.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}

	size := len(old) + len(data)
	switch {
	case isNew:
		return fmt.Sprintf("created %s: %s%s\n", tg.requested, plural(size, "byte", "bytes"), note), nil
	case appending:
		return fmt.Sprintf("appended %s to %s: now %s\n", plural(len(data), "byte", "bytes"), tg.requested, plural(size, "byte", "bytes")), nil
	default:
		return fmt.Sprintf("replaced %s: %s (was %s)\n", tg.requested, plural(size, "byte", "bytes"), plural(int(oldInfo.Size()), "byte", "bytes")), nil
	}
}

// readOld checks the existing target as ReadFile would (a regular text file
// holding no private key) and returns its content when appending; a file
// that is only replaced is scanned for a key, not kept.
func readOld(tg target, add int, appending bool, maxBytes int64) ([]byte, os.FileInfo, error) {
	f, size, err := openText(tg)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, files.Unreadable(tg.requested, err)
	}
	if appending && size+int64(add) > maxBytes {
		return nil, nil, writeRefusal(files.ErrFileTooLarge, tg.requested,
			fmt.Sprintf("it is %d bytes; with %d more it would pass this node's limit of %d bytes for a written file", size, add, maxBytes))
	}
	if !appending {
		key, err := holdsPrivateKey(f, maxReadScan)
		if err != nil {
			return nil, nil, files.Unreadable(tg.requested, err)
		}
		if key {
			return nil, nil, writeRefusal(files.ErrSecretFile, tg.requested, "it holds a private key, which this node never overwrites")
		}
		return nil, info, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, nil, files.Unreadable(tg.requested, err)
	}
	if files.HasPrivateKeyBlock(data) {
		return nil, nil, writeRefusal(files.ErrSecretFile, tg.requested, "it holds a private key, which this node never overwrites")
	}
	if int64(len(data))+int64(add) > maxBytes {
		return nil, nil, writeRefusal(files.ErrFileTooLarge, tg.requested, "it grew past this node's limit for a written file while being read")
	}
	return data, info, nil
}

// createTemp makes an empty, unique file next to relPath. A replacement
// starts private (0600) and gets the old file's mode once written; a new
// file is created 0666 less the umask, as any new file.
func createTemp(root *os.Root, relPath string, old os.FileInfo) (*os.File, error) {
	perm := os.FileMode(0o666)
	if old != nil {
		perm = 0o600
	}
	var b [6]byte
	for range 10 {
		rand.Read(b[:])
		name := filepath.Join(filepath.Dir(relPath), "."+filepath.Base(relPath)+"."+hex.EncodeToString(b[:])+".vcpnode-tmp")
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
	}
	return nil, errors.New("no free temporary name")
}

// fillTemp writes old then data to f, gives it the old file's mode and
// owner, syncs and closes it.
func fillTemp(f *os.File, oldInfo os.FileInfo, old, data []byte) error {
	_, err1 := f.Write(old)
	_, err2 := f.Write(data)
	var err3 error
	if oldInfo != nil {
		err3 = f.Chmod(oldInfo.Mode().Perm())
		keepOwner(f, oldInfo)
	}
	err4 := f.Sync()
	err5 := f.Close()
	return errors.Join(err1, err2, err3, err4, err5)
}

// holdsPrivateKey scans at most limit bytes of r for a private key block,
// a chunk at a time; each chunk starts with the end of the one before, long
// enough for an armor line that straddles them.
func holdsPrivateKey(r io.Reader, limit int64) (bool, error) {
	const overlap = 128
	buf := make([]byte, overlap+64<<10)
	kept := 0
	r = io.LimitReader(r, limit)
	for {
		n, err := io.ReadFull(r, buf[kept:])
		if files.HasPrivateKeyBlock(buf[:kept+n]) {
			return true, nil
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		kept = copy(buf, buf[len(buf)-overlap:])
	}
}

// writeFailed reports a file-system failure while writing without the OS
// error's text, which may name the resolved path.
func writeFailed(requested string, err error) error {
	reason := "the write failed"
	switch {
	case errors.Is(err, os.ErrPermission):
		reason = "permission denied"
	case errors.Is(err, os.ErrNotExist):
		reason = "its folder disappeared while being written"
	}
	return &refusedWrite{msg: fmt.Sprintf("cannot write %s: %s", quote(requested), reason), kind: errors.Join(ErrWriteFailed, err)}
}
