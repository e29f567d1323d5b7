package wsproto

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// DecodeOwned is Decode for a frame the caller hands over and never touches
// again. An execute_tool, the frame that can be large, is decoded in one
// pass over the frame (after a validity check), and the values of its
// toolArgs and _vcpContext are slices of frame instead of copies: a 50 MiB
// argument costs no second 50 MiB. Anything unusual (another type, a field
// of the wrong kind or null, a key that matches only case-insensitively, a
// malformed frame) goes through Decode, so results and errors are Decode's.
func DecodeOwned(frame []byte) (Message, error) {
	if !utf8.Valid(frame) {
		frame = bytes.ToValidUTF8(frame, utf8Replacement)
	}
	if m, ok := decodeExecuteFast(frame); ok {
		return m, nil
	}
	return Decode(frame)
}

// decodeExecuteFast decodes a well-formed execute_tool, or reports false.
func decodeExecuteFast(frame []byte) (ExecuteTool, bool) {
	// Cheap filter: the server writes the type first; other frames and
	// oddly ordered ones take the general path.
	if !bytes.Contains(frame[:min(len(frame), 64)], []byte(`"execute_tool"`)) || !json.Valid(frame) {
		return ExecuteTool{}, false
	}
	p := &scanner{b: frame}
	var typ string
	var data []byte
	ok := p.object(func(key string) bool {
		switch key {
		case "type":
			s, ok := p.str()
			typ = s
			return ok
		case "data":
			data = p.value()
			return true
		}
		if foldsToAny(key, "type", "data") {
			return false
		}
		p.value()
		return true
	})
	if !ok || typ != string(TypeExecuteTool) || firstByte(data) != '{' {
		return ExecuteTool{}, false
	}

	var m ExecuteTool
	d := &scanner{b: data}
	ok = d.object(func(key string) bool {
		switch key {
		case "requestId":
			s, ok := d.str()
			m.RequestID = s
			return ok
		case "toolName":
			s, ok := d.str()
			m.ToolName = s
			return ok
		case "toolArgs":
			v := d.value()
			if string(v) == "null" {
				m.ToolArgs = nil
				return true
			}
			if v[0] != '{' {
				return false
			}
			if m.ToolArgs == nil { // encoding/json merges a repeated object into the same map
				m.ToolArgs = map[string]json.RawMessage{}
			}
			a := &scanner{b: v}
			return a.object(func(name string) bool {
				m.ToolArgs[name] = a.value()
				return true
			})
		case "_vcpContext":
			m.VCPContext = d.value()
			return true
		}
		if foldsToAny(key, "requestId", "toolName", "toolArgs", "_vcpContext") {
			return false
		}
		d.value()
		return true
	})
	if !ok || m.RequestID == "" || m.ToolName == "" {
		return ExecuteTool{}, false
	}
	if m.ToolArgs == nil {
		m.ToolArgs = map[string]json.RawMessage{}
	}
	if isAbsent(m.VCPContext) {
		m.VCPContext = nil
	} else if m.VCPContext[0] != '{' {
		return ExecuteTool{}, false
	}
	return m, true
}

// foldsToAny reports whether key would match one of names under
// encoding/json's case-insensitive rule without being equal to it. Non-ASCII
// keys are treated as possible matches (Unicode folding: "ſ" is "s").
func foldsToAny(key string, names ...string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return true
		}
	}
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}

// scanner walks JSON already known to be valid: it only finds where values
// start and end, without building them.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object walks the object at the cursor, calling field for every key with
// the cursor on its value; field must consume the value. It stops at the
// first false.
func (s *scanner) object(field func(key string) bool) bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	for {
		s.ws()
		switch s.b[s.i] {
		case '}':
			s.i++
			return true
		case ',':
			s.i++
			s.ws()
		}
		raw := s.value()
		key, ok := unquote(raw)
		if !ok {
			return false
		}
		s.ws()
		s.i++ // ':'
		s.ws()
		if !field(key) {
			return false
		}
	}
}

// value returns the raw value at the cursor and moves past it.
func (s *scanner) value() []byte {
	s.ws()
	start := s.i
	switch s.b[s.i] {
	case '"':
		s.i++
		for s.b[s.i] != '"' {
			if s.b[s.i] == '\\' {
				s.i++
			}
			s.i++
		}
		s.i++
	case '{', '[':
		depth := 0
		for {
			switch s.b[s.i] {
			case '"':
				s.value()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return s.b[start:s.i]
			}
		}
	default: // number, true, false, null
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.b[start:s.i]
			}
			s.i++
		}
	}
	return s.b[start:s.i]
}

// str reads a string value; anything else (null included, which
// encoding/json would skip) reports false.
func (s *scanner) str() (string, bool) {
	return unquote(s.value())
}

// unquote decodes a raw JSON string.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var out string
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", false
	}
	return out, true
}
