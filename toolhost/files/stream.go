package files

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"sync"
)

// fileStream is internal_request_file's success, written straight into the
// tool_result frame: {"status":"success","mimeType":…,"fileData":"<base64>"}.
// The file was scanned whole before (size, type, no private key); while
// streaming, each chunk is scanned again before it is encoded, so a file
// changed in between to hold a key fails the frame instead of sending it.
type fileStream struct {
	f        *os.File
	size     int64 // bytes scanned; at most this many are sent
	mimeType string
	once     sync.Once
}

func (s *fileStream) MaxBytes() int64 {
	return int64(base64.StdEncoding.EncodedLen(int(s.size))) + int64(len(s.mimeType)) + 64
}

func (s *fileStream) Close() error {
	var err error
	s.once.Do(func() { err = s.f.Close() })
	return err
}

func (s *fileStream) WriteJSON(w io.Writer) error {
	defer s.Close()
	head := append(append([]byte(`{"status":"success","mimeType":`), quoteJSON(s.mimeType)...), `,"fileData":"`...)
	if _, err := w.Write(head); err != nil {
		return err
	}
	enc := base64.NewEncoder(base64.StdEncoding, w)
	chunk := make([]byte, scanChunk)
	keys := newKeyScanner()
	r := io.LimitReader(s.f, s.size)
	for {
		n, err := io.ReadFull(r, chunk)
		if n > 0 {
			if keys.next(chunk[:n]) {
				return errKeyAppeared
			}
			if _, werr := enc.Write(chunk[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, `"}`)
	return err
}

// quoteJSON quotes a MIME type as a JSON string, leaving "<", ">" and "&"
// unescaped as the node's other results do.
func quoteJSON(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil { // a string always encodes
		return []byte(`"application/octet-stream"`)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
