// Package humantext holds the few rules for text that people read in
// messages: a duration rounded the way a person reads it, the edit
// distance that finds the name a typo meant (a config key, a command), and
// cutting a long text without splitting a character.
package humantext

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Duration writes d rounded to what a person reads: "2m", "1m30s", "45s",
// "1.5s", "250ms".
func Duration(d time.Duration) string {
	switch {
	case d >= time.Minute:
		d = d.Round(time.Second)
	case d >= time.Second:
		d = d.Round(100 * time.Millisecond)
	default:
		d = d.Round(time.Millisecond)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// EditDistance is the Levenshtein distance of a and b, in bytes.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest is the candidate a person most likely meant by typo: the same
// name in another case, else the one fewest edits away, when that is at
// most 2 edits or a third of typo's length. "" when none is that close.
func Closest(typo string, candidates []string) string {
	best, bestDist := "", max(2, len(typo)/3)+1
	for _, c := range candidates {
		if strings.EqualFold(c, typo) {
			return c
		}
		if d := EditDistance(strings.ToLower(typo), strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Truncate cuts s to at most n bytes without splitting a UTF-8 character.
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// WireLogBytes bounds a value taken from the wire in a log line: a request
// id or a tool name a server sends can be megabytes long.
const WireLogBytes = 128

// ClipWire shortens a value taken from the wire for a log line to its first
// WireLogBytes bytes, saying how long it was; a shorter one is returned as
// it is.
func ClipWire(s string) string {
	if len(s) <= WireLogBytes {
		return s
	}
	return Truncate(s, WireLogBytes) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// Clip shortens a value quoted in a message to its first n bytes followed
// by "…"; a value of n bytes or fewer is returned as it is.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Truncate(s, n) + "…"
}
