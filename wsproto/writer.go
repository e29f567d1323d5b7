package wsproto

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"unicode/utf8"
)

// frameWriter appends one envelope to a byte slice. Encode writes frames by
// hand instead of through json.Marshal: no reflection, no map round-trip,
// one allocation for a well-sized frame, and no HTML escaping (the server
// does not need "<" as "\u003c", and it would bloat tool output).
type frameWriter struct {
	b     []byte
	first bool // the next field opens its object
}

// newFrameWriter starts a frame of type t with room for about size bytes of
// field content. message is the envelope's "message", omitted when empty.
func newFrameWriter(t Type, message string, size int) frameWriter {
	w := frameWriter{b: make([]byte, 0, 32+len(t)+len(message)+size)}
	w.b = append(w.b, `{"type":`...)
	w.b = appendString(w.b, string(t))
	if message != "" {
		w.b = append(w.b, `,"message":`...)
		w.b = appendString(w.b, message)
	}
	w.b = append(w.b, `,"data":{`...)
	w.first = true
	return w
}

// key writes the separator and "k": for the next field. k must not need
// escaping (every key is a constant of this package or already escaped).
func (w *frameWriter) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *frameWriter) str(k, v string) {
	w.key(k)
	w.b = appendString(w.b, v)
}

// optStr writes a string field only when it is not empty (omitempty).
func (w *frameWriter) optStr(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

// strMap writes a field holding m as an object of strings, its keys in
// sorted order so that a frame is the same bytes for the same map.
func (w *frameWriter) strMap(k string, m map[string]string) {
	w.key(k)
	w.open('{')
	for _, mk := range slices.Sorted(maps.Keys(m)) {
		w.comma()
		w.b = appendString(w.b, mk)
		w.b = append(w.b, ':')
		w.b = appendString(w.b, m[mk])
	}
	w.close('}')
}

func (w *frameWriter) bool(k string, v bool) {
	w.key(k)
	if v {
		w.b = append(w.b, "true"...)
	} else {
		w.b = append(w.b, "false"...)
	}
}

// raw writes a raw JSON value, validated and compacted. want is "object"
// or "" for any kind; field names the value in errors.
func (w *frameWriter) raw(k, field string, v []byte, want string) error {
	w.key(k)
	return w.rawValue(field, v, want)
}

// rawValue writes a raw JSON value with no key (array elements, map
// values). See raw.
func (w *frameWriter) rawValue(field string, v []byte, want string) error {
	start := len(w.b)
	if len(v) == 0 {
		return missing(field)
	}
	// Invalid UTF-8 can only sit inside strings of valid JSON, so replacing
	// it keeps the JSON valid; the server's ws library would close the
	// connection on an invalid text frame.
	if !utf8.Valid(v) {
		v = bytes.ToValidUTF8(v, utf8Replacement)
	}
	buf := bytes.NewBuffer(w.b)
	if err := json.Compact(buf, v); err != nil {
		// Compact's syntax errors carry no offset; json.Valid's parser,
		// reached through Unmarshal, reports one.
		var probe json.RawMessage
		if uerr := json.Unmarshal(v, &probe); uerr != nil {
			err = uerr
		}
		return notJSON(field, err)
	}
	w.b = buf.Bytes()
	if want != "" {
		if got := kindOf(w.b[start:]); got != want {
			return wrongType(field, want, got)
		}
	}
	return nil
}

// open and close write the brackets of a nested object or array.
func (w *frameWriter) open(c byte) {
	w.b = append(w.b, c)
	w.first = true
}

func (w *frameWriter) close(c byte) {
	w.b = append(w.b, c)
	w.first = false
}

// comma separates the elements of an array.
func (w *frameWriter) comma() {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
}

// end closes data and the envelope and returns the frame.
func (w *frameWriter) end() []byte {
	return append(w.b, '}', '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. It escapes only what JSON
// requires ('"', '\\' and control characters) and replaces invalid UTF-8
// with U+FFFD, like encoding/json.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
