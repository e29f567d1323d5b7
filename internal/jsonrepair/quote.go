package jsonrepair

import (
	"strings"
	"unicode/utf8"
)

// quoteJSON is s as a JSON string exactly as go-json-experiment's
// json.Marshal writes one with its default options: '"' and '\' escaped,
// control characters as \b \f \n \r \t or \u00xx, everything else
// (<, >, &, U+2028, U+2029, DEL) as it is, and invalid UTF-8 as U+FFFD.
func quoteJSON(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b.WriteString("\ufffd")
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		}
		i++
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < ' ' {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
