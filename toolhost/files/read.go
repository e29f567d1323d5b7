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
// descriptor in case the file was swapped in between. It returns the size
// the open file had.
func openServedFile(requested, resolved string, maxBytes int64) (*os.File, int64, error) {
	info, err := os.Lstat(resolved)
	if err != nil {
		return nil, 0, unreadable(requested, err)
	}
	if err := checkServable(requested, info, maxBytes); err != nil {
		return nil, 0, err
	}
	f, err := openNoFollow(resolved)
	if err != nil {
		return nil, 0, unreadable(requested, err)
	}
	opened, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, unreadable(requested, err)
	}
	if !os.SameFile(info, opened) {
		f.Close()
		return nil, 0, refusal(ErrNotRegularFile, requested, "it was replaced while being opened; try again")
	}
	if err := checkServable(requested, opened, maxBytes); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, opened.Size(), nil
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

// scanChunk is the buffer of each pass over a streamed file: the tail of
// the chunk before (for keys across the boundary), then the next chunk.
const scanChunk = 64 << 10

// keyOverlap is longer than a PEM/OpenPGP "BEGIN … PRIVATE KEY" line start.
const keyOverlap = 128

// chunkScanner reads a file chunk by chunk into one pooled buffer and finds
// private key blocks across chunk boundaries: each chunk is checked together
// with the tail of the one before, which stays in front of it.
type chunkScanner struct {
	buf       *[]byte
	tail, end int // buf[:tail] is the previous tail; buf[tail:end] the last chunk
}

func newChunkScanner() *chunkScanner {
	return &chunkScanner{buf: getBuf(scanChunk)}
}

// read reads the next chunk of r (up to scanChunk bytes, fewer at the end).
// The chunk is valid until the next read; key reports whether the bytes
// seen so far hold a private key block that starts in or reaches into it.
func (k *chunkScanner) read(r io.Reader) (chunk []byte, key bool, err error) {
	b := (*k.buf)[:scanChunk]
	keep := min(keyOverlap, k.end)
	copy(b, b[k.end-keep:k.end])
	k.tail = keep
	n, err := io.ReadFull(r, b[k.tail:])
	k.end = k.tail + n
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return b[k.tail:k.end], n > 0 && hasPrivateKeyBlock(b[:k.end]), err
}

// release gives the buffer back; the scanner must not be used after.
func (k *chunkScanner) release() {
	putBuf(k.buf)
	k.buf = nil
}

// scanServedFile reads r (a file measured at expected bytes) to the end in
// chunks, without keeping it: it returns the size, the first 512 bytes (for
// sniffing the type) and whether a private key block is in it. It fails if
// more than maxBytes arrive, however the file changes meanwhile.
func scanServedFile(ctx context.Context, r io.Reader, maxBytes int64) (size int64, head []byte, key bool, err error) {
	limited := io.LimitReader(r, maxBytes+1)
	chunks := newChunkScanner()
	defer chunks.release()
	for {
		if err := ctx.Err(); err != nil {
			return 0, nil, false, err
		}
		chunk, found, err := chunks.read(limited)
		if len(head) < sniffLen {
			head = append(head, chunk[:min(len(chunk), sniffLen-len(head))]...)
		}
		size += int64(len(chunk))
		if size > maxBytes {
			return 0, nil, false, errGrewPastCap
		}
		key = key || found
		if err == io.EOF {
			return size, head, key, nil
		}
		if err != nil {
			return 0, nil, false, err
		}
	}
}

// sniffLen is what http.DetectContentType looks at.
const sniffLen = 512
