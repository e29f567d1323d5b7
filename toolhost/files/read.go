package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// openServedFile opens the symlink-free path resolved (named requested in
// errors) if it is a regular file of at most maxBytes. The mode is checked
// before opening so a fifo or device is never opened, and again on the open
// descriptor in case the file was swapped in between.
func openServedFile(requested, resolved string, maxBytes int64) (*os.File, error) {
	info, err := os.Lstat(resolved)
	if err != nil {
		return nil, unreadable(requested, err)
	}
	if err := checkServable(requested, info, maxBytes); err != nil {
		return nil, err
	}
	f, err := openNoFollow(resolved)
	if err != nil {
		return nil, unreadable(requested, err)
	}
	opened, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, unreadable(requested, err)
	}
	if !os.SameFile(info, opened) {
		f.Close()
		return nil, refusal(ErrNotRegularFile, requested, "it was replaced while being opened; try again")
	}
	if err := checkServable(requested, opened, maxBytes); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkServable refuses anything but a regular file within the size cap.
func checkServable(requested string, info os.FileInfo, maxBytes int64) error {
	switch {
	case info.IsDir():
		return refusal(ErrNotRegularFile, requested, "it is a directory; only regular files are served")
	case !info.Mode().IsRegular():
		return refusal(ErrNotRegularFile, requested, "it is not a regular file (a device, fifo, socket or the like)")
	case info.Size() > maxBytes:
		return refusal(ErrFileTooLarge, requested, fmt.Sprintf("it is %d bytes, over this node's limit of %d bytes", info.Size(), maxBytes))
	}
	return nil
}

// errGrewPastCap: the file outgrew maxBytes after it was measured.
var errGrewPastCap = errors.New("file grew past the size cap")

// errKeyAppeared: a private key block turned up while streaming a file that
// had none when it was checked.
var errKeyAppeared = errors.New("the file changed to hold a private key while being sent")

// scanChunk is the read size of both passes over a served file.
const scanChunk = 64 << 10

// keyScanner finds private key blocks across chunk boundaries: each chunk
// is checked together with the tail of the one before.
type keyScanner struct {
	buf  []byte // tail of the previous chunk, then the current chunk
	tail int
}

// keyOverlap is longer than a PEM/OpenPGP "BEGIN … PRIVATE KEY" line start.
const keyOverlap = 128

func newKeyScanner() *keyScanner {
	return &keyScanner{buf: make([]byte, 0, keyOverlap+scanChunk)}
}

// next reports whether the bytes seen so far, ending with chunk, hold a
// private key block that starts in or reaches into chunk.
func (k *keyScanner) next(chunk []byte) bool {
	k.buf = append(k.buf[:k.tail], chunk...)
	found := hasPrivateKeyBlock(k.buf)
	keep := min(keyOverlap, len(k.buf))
	copy(k.buf, k.buf[len(k.buf)-keep:])
	k.tail = keep
	return found
}

// scanServedFile reads r (a file measured at expected bytes) to the end in
// chunks, without keeping it: it returns the size, the first 512 bytes (for
// sniffing the type) and whether a private key block is in it. It fails if
// more than maxBytes arrive, however the file changes meanwhile.
func scanServedFile(ctx context.Context, r io.Reader, maxBytes int64) (size int64, head []byte, key bool, err error) {
	limited := io.LimitReader(r, maxBytes+1)
	chunk := make([]byte, scanChunk)
	keys := newKeyScanner()
	for {
		if err := ctx.Err(); err != nil {
			return 0, nil, false, err
		}
		n, err := io.ReadFull(limited, chunk)
		if len(head) < sniffLen {
			head = append(head, chunk[:min(n, sniffLen-len(head))]...)
		}
		size += int64(n)
		if size > maxBytes {
			return 0, nil, false, errGrewPastCap
		}
		if n > 0 && keys.next(chunk[:n]) {
			key = true
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return size, head, key, nil
		}
		if err != nil {
			return 0, nil, false, err
		}
	}
}

// sniffLen is what http.DetectContentType looks at.
const sniffLen = 512
