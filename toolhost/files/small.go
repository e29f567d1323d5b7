package files

import (
	"context"
	"encoding/base64"
	"io"
	"sync"
)

// smallFileBytes is the largest file served from memory: read in one go,
// scanned once, and encoded before the result reaches the connection, so
// the connection's writer copies bytes and never waits on the disk. Larger
// files are streamed in chunks, with bounded memory.
const smallFileBytes = 128 << 10

// serveSmall reads the whole of f (measured at size bytes) in one read and
// builds the result. done is false, and the rest zero, when f turned out to be larger than it
// was measured, beyond what the small path holds: the caller streams it.
func (t *fileTool) serveSmall(ctx context.Context, f io.Reader, requested, resolved string, size int64) (res any, done bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, true, t.checkScanned(ctx, requested, 0, false, err)
	}
	// One byte of room beyond the measured size tells a grown file.
	data := getBuf(int(size) + 1)
	defer putBuf(data)
	buf := (*data)[:cap(*data)]
	n, err := readSmall(f, buf, int(size))
	switch {
	case err == nil && n == len(buf): // filled the buffer: it grew, possibly a lot
		return nil, false, nil
	case err == io.EOF:
		err = nil
	}
	if int64(n) > t.maxBytes {
		err = errGrewPastCap
	}
	content := buf[:n]
	if err := t.checkScanned(ctx, requested, int64(n), err == nil && hasPrivateKeyBlock(content), err); err != nil {
		return nil, true, err
	}
	mimeType := mimeTypeOf(requested, resolved, content[:min(n, sniffLen)])
	out := getBuf(len(resultHead) + len(mimeType) + 16 + base64.StdEncoding.EncodedLen(n) + len(resultTail))
	b := append(append(*out, resultHead...), quoteJSON(mimeType)...)
	b = append(b, resultData...)
	b = base64.StdEncoding.AppendEncode(b, content)
	*out = append(b, resultTail...)
	return &smallResult{buf: out}, true, nil
}

// readSmall reads f into buf until the end of the file, until buf is full,
// or once exactly size bytes (the size f was measured at) have come: that is
// the file as measured, and it saves the read that would only see its end.
// err is nil or io.EOF when the read went well.
func readSmall(f io.Reader, buf []byte, size int) (n int, err error) {
	for n < len(buf) {
		var m int
		m, err = f.Read(buf[n:])
		n += m
		if err != nil || (n == size && m > 0) {
			return n, err
		}
	}
	return n, nil
}

// The success value's JSON around its two fields.
const (
	resultHead = `{"status":"success","mimeType":`
	resultData = `,"fileData":"`
	resultTail = `"}`
)

// smallResult is a small file's whole result, ready to write; its buffer
// goes back to the pool once written or dropped.
type smallResult struct {
	buf  *[]byte
	once sync.Once
}

func (r *smallResult) MaxBytes() int64 { return int64(len(*r.buf)) }

func (r *smallResult) WriteJSON(w io.Writer) error {
	defer r.Close()
	_, err := w.Write(*r.buf)
	return err
}

func (r *smallResult) Close() error {
	r.once.Do(func() {
		putBuf(r.buf)
	})
	return nil
}
