package toolhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// readChunk bounds each read so a cancelled call stops within one chunk.
const readChunk = 1 << 20

// readServedFile reads the symlink-free path resolved (named requested in
// errors) if it is a non-empty regular file of at most maxBytes. The mode is
// checked before opening so a fifo or device is never opened, and again on
// the open descriptor in case the file was swapped in between.
func readServedFile(ctx context.Context, requested, resolved string, maxBytes int64) ([]byte, error) {
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
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, unreadable(requested, err)
	}
	if !os.SameFile(info, opened) {
		return nil, refusal(ErrNotRegularFile, requested, "it was replaced while being opened; try again")
	}
	if err := checkServable(requested, opened, maxBytes); err != nil {
		return nil, err
	}
	data, err := readCapped(ctx, f, opened.Size(), maxBytes)
	switch {
	case errors.Is(err, errGrewPastCap):
		return nil, refusal(ErrFileTooLarge, requested, fmt.Sprintf("it grew past this node's limit of %d bytes while being read", maxBytes))
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("reading %s: %w", quotePath(requested), err)
	case err != nil:
		return nil, unreadable(requested, err)
	case len(data) == 0:
		return nil, refusal(ErrFileEmpty, requested, ErrFileEmpty.Error())
	}
	return data, nil
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

// errGrewPastCap is readCapped's signal that the file outgrew maxBytes after
// it was measured.
var errGrewPastCap = errors.New("file grew past the size cap")

// readCapped reads r to the end, sized for the expected length, and fails if
// more than maxBytes arrive, however the file changes meanwhile.
func readCapped(ctx context.Context, r io.Reader, expected, maxBytes int64) ([]byte, error) {
	limited := io.LimitReader(r, maxBytes+1)
	// One spare byte lets a file of exactly the expected size hit EOF
	// without growing the buffer.
	buf := make([]byte, 0, min(max(expected, 511), maxBytes)+1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(readChunk, int(maxBytes+1)-len(buf)))
		}
		n, err := limited.Read(buf[len(buf):min(cap(buf), len(buf)+readChunk)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > maxBytes {
			return nil, errGrewPastCap
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
