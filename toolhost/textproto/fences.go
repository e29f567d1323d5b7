package textproto

import "strings"

// markExamples sets Example on the calls (sorted by Offset) that start
// inside a Markdown code fence of reply: a line of three or more backticks
// or tildes (indented at most three spaces) opens one, a line of the same
// character at least as long closes it, and one never closed runs to the
// end of the reply (CommonMark's rules).
func markExamples(reply string, calls []Call) {
	if len(calls) == 0 || (!strings.Contains(reply, "```") && !strings.Contains(reply, "~~~")) {
		return
	}
	next := 0 // the first call not yet placed
	var fenceChar byte
	fenceLen, fenceStart := 0, 0
	for lineStart := 0; lineStart <= len(reply) && next < len(calls); {
		lineEnd := strings.IndexByte(reply[lineStart:], '\n')
		if lineEnd < 0 {
			lineEnd = len(reply)
		} else {
			lineEnd += lineStart
		}
		ch, n, rest := fenceLine(reply[lineStart:lineEnd])
		switch {
		case fenceChar == 0 && n > 0 && !(ch == '`' && strings.Contains(rest, "`")):
			// Calls before the fence are outside it.
			for next < len(calls) && calls[next].Offset < lineStart {
				next++
			}
			fenceChar, fenceLen, fenceStart = ch, n, lineStart
		case fenceChar != 0 && ch == fenceChar && n >= fenceLen && strings.TrimSpace(rest) == "":
			for next < len(calls) && calls[next].Offset < lineEnd {
				calls[next].Example = calls[next].Offset >= fenceStart
				next++
			}
			fenceChar = 0
		}
		lineStart = lineEnd + 1
	}
	if fenceChar != 0 {
		for ; next < len(calls); next++ {
			calls[next].Example = calls[next].Offset >= fenceStart
		}
	}
}

// fenceLine reads a fence line: its character and run length (0 when the
// line is not one) and the text after the run.
func fenceLine(line string) (ch byte, n int, rest string) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0, ""
	}
	ch = line[i]
	j := i
	for j < len(line) && line[j] == ch {
		j++
	}
	if j-i < 3 {
		return 0, 0, ""
	}
	return ch, j - i, line[j:]
}
