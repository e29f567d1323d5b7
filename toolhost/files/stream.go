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
	head := append(append([]byte(resultHead), quoteJSON(s.mimeType)...), resultData...)
	if _, err := w.Write(head); err != nil {
		return err
	}
	enc := base64.NewEncoder(base64.StdEncoding, w)
	chunks := newChunkScanner()
	defer chunks.release()
	r := io.LimitReader(s.f, s.size)
	for {
		chunk, key, err := chunks.read(r)
		if key {
			return errKeyAppeared
		}
		if len(chunk) > 0 {
			if _, werr := enc.Write(chunk); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, resultTail)
	return err
}

// quoteJSON quotes a MIME type as a JSON string, leaving "<", ">" and "&"
// unescaped as the node's other results do. A bare media type is plain
// printable ASCII and is quoted as it is.
func quoteJSON(s string) []byte {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\'
	}
	if plain {
		return append(append(append(make([]byte, 0, len(s)+2), '"'), s...), '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil { // a string always encodes
		return []byte(`"application/octet-stream"`)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
