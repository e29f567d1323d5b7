package config

import (
	"net/url"
	"regexp"
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
// VCP_Key=REDACTED. Use it on anything that may contain the hub URL: log
// messages, library errors, status output.
func Redact(s string) string {
	return keySegment.ReplaceAllLiteralString(s, "VCP_Key=REDACTED")
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
