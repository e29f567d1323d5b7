package node

import (
	"strconv"
	"unicode/utf8"
)

// Warnings the server can cause at any rate go through n.warnings, a
// toolhost.WarnLimiter; values taken from the wire are clipped.

// maxLogValue bounds a value taken from the wire in a log line: a requestId
// can be megabytes long.
const maxLogValue = 128

// clip shortens a value from the wire for a log line, saying how long it was.
func clip(s string) string {
	if len(s) <= maxLogValue {
		return s
	}
	cut := maxLogValue
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
