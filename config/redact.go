package config

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// keySegment matches "VCP_Key=" (any case, also percent-encoded as
// "VCP_Key%3D") and what follows up to a character that cannot be part of a
// valid key and commonly ends a URL in text: / ? # whitespace " \ ` < >.
// A \uXXXX escape does not end it: encoding/json writes '&' (a valid key
// character) as \u0026. A single quote does not end it either, because keys
// may contain one; a quoted URL may then lose its closing quote, which is the
// safe way to be wrong.
var keySegment = regexp.MustCompile("(?i)vcp_key(?:=|%3d)(?:[^/?#\\s\\v\"\\\\`<>]|\\\\u[0-9a-f]{4})*")

// Redact replaces every VCP key embedded in s as VCP_Key=<key> with
// VCP_Key=REDACTED, and every key this process has resolved (Config.Key),
// wherever it appears, with REDACTED. Use it on anything that may hold the
// hub URL or text from the server: log lines, library errors, status,
// audit and metrics output.
func Redact(s string) string {
	if hasKeyParam(s) {
		s = keySegment.ReplaceAllLiteralString(s, "VCP_Key=REDACTED")
	}
	return knownKeys.replace(s)
}

// RedactBytes is Redact for a line about to be written: p itself when there
// is nothing to hide (most lines, and without copying them), else a
// redacted copy.
func RedactBytes(p []byte) []byte {
	if !hasKeyParam(p) && !knownKeys.in(p) {
		return p
	}
	return []byte(Redact(string(p)))
}

// hasKeyParam reports whether s holds "vcp_key" in any case, as (?i) folds
// it (the Kelvin sign K is a k): keySegment cannot match without it, and
// finding it is much cheaper than running the expression over every line.
func hasKeyParam[T string | []byte](s T) bool {
	const kelvin = "\u212a"
	for i := 3; i+4 <= len(s); i++ {
		if s[i] != '_' || !foldedIs(s[i-3:i], "vcp") {
			continue
		}
		if foldedIs(s[i+1:i+4], "key") {
			return true
		}
		if rest := s[i+1:]; len(rest) >= len(kelvin)+2 && string(rest[:len(kelvin)]) == kelvin && foldedIs(rest[len(kelvin):], "ey") {
			return true
		}
	}
	return false
}

// foldedIs compares s, ASCII letters in any case, with lower, all lowercase.
func foldedIs[T string | []byte](s T, lower string) bool {
	for i := range len(lower) {
		if s[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// minBareKey is the shortest key replaced wherever it appears. A shorter
// one could match inside the escapes JSON output is made of (\u0026) and
// break it; it is still redacted after VCP_Key=.
const minBareKey = 6

// knownKeys are the keys this process has resolved. A peer may echo the key
// anywhere (in a close reason, a serverId, a tool name, a file URL), not
// only after VCP_Key=, so Redact looks for the key itself. It is process
// wide because the key is: every output path must hide it, including those
// (library errors, the last error printed by main) that cannot be handed a
// redactor.
var knownKeys secretSet

type secretSet struct {
	mu    sync.RWMutex
	forms []string // longest first, so a form holding another is replaced whole
}

// rememberKey makes Redact replace key, and the forms it takes in URLs and
// JSON, wherever they appear.
func rememberKey(key string) { knownKeys.add(key) }

func (s *secretSet) add(key string) {
	if len(key) < minBareKey {
		return
	}
	quoted, _ := json.Marshal(key) // escapes & < > as \u00XX
	forms := []string{key, url.PathEscape(key), url.QueryEscape(key), string(quoted[1 : len(quoted)-1])}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range forms {
		if !slices.Contains(s.forms, f) {
			s.forms = append(s.forms, f)
		}
	}
	slices.SortFunc(s.forms, func(a, b string) int { return len(b) - len(a) })
}

// in reports whether p holds any of the forms.
func (s *secretSet) in(p []byte) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, f := range s.forms {
		if bytes.Contains(p, []byte(f)) {
			return true
		}
	}
	return false
}

func (s *secretSet) replace(text string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, f := range s.forms {
		if strings.Contains(text, f) {
			text = strings.ReplaceAll(text, f, "REDACTED")
		}
	}
	return text
}

// RedactedURL is u as a string with the key and any password redacted.
func RedactedURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	return Redact(u.Redacted())
}

// RedactErr hides the key in err's message. errors.Is and errors.As still
// see the original error through Unwrap; note that the original's own
// Error() is not redacted, so never print what errors.As extracts.
func RedactErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := Redact(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
