package textproto

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The XML call format: <function_calls><invoke name=…><parameter name=…>.
const (
	xmlBlockOpen  = "<function_calls>"
	xmlBlockClose = "</function_calls>"
	xmlInvoke     = "<invoke"
	xmlInvokeEnd  = "</invoke>"
	xmlParam      = "<parameter"
	xmlParamEnd   = "</parameter>"
	cdataOpen     = "<![CDATA["
	cdataClose    = "]]>"
)

// ParseXML finds the <function_calls> blocks of reply.
func ParseXML(reply string) Result {
	return Parse(reply, Options{Formats: []Format{FormatXML}})
}

// xmlParser reads <function_calls> blocks: several <invoke name="…"> per
// block, each with <parameter name="…">value</parameter> children. Values
// have their entities decoded, CDATA sections are kept as written, and
// whitespace around a value (outside CDATA) is trimmed. The text is not
// required to be well-formed XML: a value runs to the first </parameter>
// outside a CDATA section, so code with "<" in it reads as written.
type xmlParser struct {
	st    stripped
	lines lineIndex
	text  string
	res   Result
	find  map[string]*finder
}

func (p *xmlParser) next(lit string, from int) int {
	f, ok := p.find[lit]
	if !ok {
		text := p.text
		f = newFinder(func(from int) (int, int) {
			i := strings.Index(text[from:], lit)
			if i < 0 {
				return -1, 0
			}
			return from + i, len(lit)
		})
		p.find[lit] = f
	}
	i, _ := f.next(from)
	return i
}

func parseXML(st stripped, claimed spanSet, lines lineIndex) (Result, []span) {
	p := &xmlParser{st: st, lines: lines, text: st.text, find: map[string]*finder{}}
	var spans []span
	for pos := 0; pos < len(p.text); {
		b := p.next(xmlBlockOpen, pos)
		if b < 0 {
			break
		}
		if claimed.overlaps(b, b+len(xmlBlockOpen)) {
			pos = b + len(xmlBlockOpen)
			continue
		}
		end := p.block(b)
		spans = append(spans, span{b, end})
		pos = end
	}
	return p.res, spans
}

func (p *xmlParser) reject(at int, reason string) {
	off := p.st.toReply(at)
	p.res.Rejected = append(p.res.Rejected, Rejected{Format: FormatXML, Line: p.lines.line(off), Reason: reason, Offset: off})
}

// block reads the block opened at b and returns where it ends: after its
// </function_calls>, or, when it never closes, at the next
// <function_calls> or the end of the reply. The calls of a block that
// never closes are not run (the reply was probably cut off); each invoke's
// own problem is reported either way.
func (p *xmlParser) block(b int) int {
	text := p.text
	pos := b + len(xmlBlockOpen)
	var calls []Call
	invokes := 0
	unclosed := func() {
		reason := "<function_calls> is never closed by </function_calls>"
		if n := len(calls); n > 0 {
			reason += fmt.Sprintf("; its %d complete call(s) are not run", n)
		}
		p.reject(b, reason)
	}
	for {
		pos = skipJSSpace(text, pos)
		switch {
		case pos >= len(text):
			unclosed()
			return len(text)
		case strings.HasPrefix(text[pos:], xmlBlockClose):
			if invokes == 0 {
				p.reject(b, "<function_calls> holds no <invoke>")
			}
			p.res.Calls = append(p.res.Calls, calls...)
			return pos + len(xmlBlockClose)
		case strings.HasPrefix(text[pos:], xmlBlockOpen):
			unclosed()
			return pos
		case hasTag(text, pos, xmlInvoke):
			invokes++
			c, problem, end := p.invoke(pos)
			if problem != "" {
				p.reject(pos, problem)
			} else {
				calls = append(calls, c)
			}
			pos = end
		default:
			// Stray text or another element: skip to the next tag.
			if i := strings.IndexByte(text[pos+1:], '<'); i >= 0 {
				pos += 1 + i
			} else {
				pos = len(text)
			}
		}
	}
}

// hasTag reports whether text[i:] starts with the tag name lit followed by
// whitespace, ">" or "/".
func hasTag(text string, i int, lit string) bool {
	if !strings.HasPrefix(text[i:], lit) {
		return false
	}
	j := i + len(lit)
	return j < len(text) && (text[j] == '>' || text[j] == '/' || isJSSpace(rune(text[j])))
}

// invoke reads one <invoke> at i and returns the call, or the problem that
// rejects it, and where reading goes on: after its </invoke>, or at the
// </function_calls> or <function_calls> that comes first when it has none.
func (p *xmlParser) invoke(i int) (c Call, problem string, end int) {
	text := p.text
	attrs, pos, selfClosed, ok := readAttrs(text, i+len(xmlInvoke))
	if !ok {
		return c, "the <invoke> tag is never closed by \">\"", len(text)
	}
	name, hasName := attrs["name"]
	c = Call{Format: FormatXML, Tool: strings.TrimSpace(name), ID: strings.TrimSpace(attrs["id"]), Args: map[string]json.RawMessage{}}
	c.Offset = p.st.toReply(i)
	c.Line = p.lines.line(c.Offset)
	switch {
	case !hasName:
		problem = "<invoke> has no name attribute"
	case c.Tool == "":
		problem = "<invoke> has an empty name"
	}
	if selfClosed {
		return c, problem, pos
	}
	for {
		pos = skipJSSpace(text, pos)
		switch {
		case pos >= len(text),
			strings.HasPrefix(text[pos:], xmlBlockClose),
			strings.HasPrefix(text[pos:], xmlBlockOpen):
			if problem == "" {
				problem = "<invoke> is never closed by </invoke>"
			}
			return c, problem, pos
		case strings.HasPrefix(text[pos:], xmlInvokeEnd):
			return c, problem, pos + len(xmlInvokeEnd)
		case hasTag(text, pos, xmlParam):
			pos = p.parameter(pos, &c, &problem)
		default:
			if j := strings.IndexByte(text[pos+1:], '<'); j >= 0 {
				pos += 1 + j
			} else {
				pos = len(text)
			}
		}
	}
}

// invokeBound is where the invoke that text[from:] is in must end at the
// latest: the next </invoke>, </function_calls> or <function_calls>, or
// the end of the reply.
func (p *xmlParser) invokeBound(from int) int {
	bound := len(p.text)
	for _, lit := range []string{xmlInvokeEnd, xmlBlockClose, xmlBlockOpen} {
		if j := p.next(lit, from); j >= 0 {
			bound = min(bound, j)
		}
	}
	return bound
}

// parameter reads one <parameter> at i into c and returns where reading
// goes on. A parameter whose </parameter> does not come before its
// invoke's end (invokeBound, outside CDATA) is never closed: the invoke is
// rejected for it, and reading goes on at that end, so the next invoke and
// the next block are read as written.
func (p *xmlParser) parameter(i int, c *Call, problem *string) int {
	text := p.text
	line := p.lines.line(p.st.toReply(i))
	attrs, pos, selfClosed, ok := readAttrs(text, i+len(xmlParam))
	if !ok {
		if *problem == "" {
			*problem = fmt.Sprintf("the <parameter> tag on line %d is never closed by \">\"", line)
		}
		return len(text)
	}
	name, hasName := attrs["name"]
	unclosed := func(at int) int {
		if *problem == "" {
			what := "a <parameter>"
			if hasName {
				what = fmt.Sprintf("<parameter name=%q>", name)
			}
			*problem = fmt.Sprintf("%s on line %d is never closed by </parameter>", what, line)
		}
		return p.invokeBound(at)
	}
	value := ""
	if !selfClosed {
		// Segments of decoded text and CDATA contents; whitespace is trimmed
		// only at the ends and only from text, never from CDATA.
		type segment struct {
			s     string
			cdata bool
		}
		var segs []segment
		from := pos
		for {
			e := p.next(xmlParamEnd, from)
			cd := p.next(cdataOpen, from)
			bound := p.invokeBound(from)
			if cd >= 0 && cd < bound && (e < 0 || cd < e) {
				segs = append(segs, segment{decodeEntities(text[from:cd]), false})
				ce := p.next(cdataClose, cd+len(cdataOpen))
				if ce < 0 {
					return unclosed(cd + len(cdataOpen))
				}
				segs = append(segs, segment{text[cd+len(cdataOpen) : ce], true})
				from = ce + len(cdataClose)
				continue
			}
			if e < 0 || e > bound {
				return unclosed(from)
			}
			after := e + len(xmlParamEnd)
			if !p.structural(after) {
				// Text, not a tag of the call, follows this </parameter>: it
				// is part of the value when a later </parameter> of the same
				// invoke ends it before another <parameter> opens; stray
				// text when another <parameter> follows.
				bound := p.invokeBound(after)
				next, opens := p.next(xmlParamEnd, after), p.next(xmlParam, after)
				if opens >= bound {
					opens = -1
				}
				if next >= 0 && next < bound && (opens < 0 || next < opens) {
					c.Notes = append(c.Notes, fmt.Sprintf("the value of parameter %q holds a literal %s (line %d), read as text: what follows it is not a tag of the call",
						strings.TrimSpace(name), xmlParamEnd, p.lines.line(p.st.toReply(e))))
					segs = append(segs, segment{decodeEntities(text[from:after]), false})
					from = after
					continue
				}
				if opens >= 0 {
					c.Notes = append(c.Notes, fmt.Sprintf("text after the %s of parameter %q on line %d is not part of any parameter and is ignored",
						xmlParamEnd, strings.TrimSpace(name), p.lines.line(p.st.toReply(e))))
				} else if *problem == "" {
					*problem = fmt.Sprintf("text follows the %s of parameter %q on line %d, and no later %s ends it: the value may have been cut short, so the call is not run",
						xmlParamEnd, strings.TrimSpace(name), p.lines.line(p.st.toReply(e)), xmlParamEnd)
				}
			}
			segs = append(segs, segment{decodeEntities(text[from:e]), false})
			pos = after
			break
		}
		if !segs[0].cdata {
			segs[0].s = strings.TrimLeftFunc(segs[0].s, isJSSpace)
		}
		if last := len(segs) - 1; !segs[last].cdata {
			segs[last].s = strings.TrimRightFunc(segs[last].s, isJSSpace)
		}
		var b strings.Builder
		for _, sg := range segs {
			b.WriteString(sg.s)
		}
		value = b.String()
	}
	switch {
	case !hasName:
		if *problem == "" {
			*problem = fmt.Sprintf("a <parameter> on line %d has no name attribute", line)
		}
	default:
		name = strings.TrimSpace(name)
		if _, dup := c.Args[name]; dup {
			c.Notes = append(c.Notes, fmt.Sprintf("parameter %q is given more than once; the last one counts", name))
		}
		c.Args[name] = stringJSON(value)
	}
	return pos
}

// structural reports whether what follows i, after whitespace, is what
// may follow a parameter's end: another parameter, the invoke's or the
// block's end, or the end of the reply.
func (p *xmlParser) structural(i int) bool {
	i = skipJSSpace(p.text, i)
	if i >= len(p.text) {
		return true
	}
	rest := p.text[i:]
	return hasTag(p.text, i, xmlParam) || strings.HasPrefix(rest, "<!--") || hasTag(p.text, i, xmlInvoke) || strings.HasPrefix(rest, xmlInvokeEnd) ||
		strings.HasPrefix(rest, xmlBlockClose) || strings.HasPrefix(rest, xmlBlockOpen)
}

// readAttrs reads name="value" / name='value' pairs up to ">" or "/>".
func readAttrs(text string, i int) (attrs map[string]string, end int, selfClosed, ok bool) {
	attrs = map[string]string{}
	for {
		i = skipJSSpace(text, i)
		if i >= len(text) {
			return nil, len(text), false, false
		}
		switch {
		case text[i] == '>':
			return attrs, i + 1, false, true
		case strings.HasPrefix(text[i:], "/>"):
			return attrs, i + 2, true, true
		}
		j := i
		for j < len(text) && text[j] != '=' && text[j] != '>' && text[j] != '/' && !isJSSpace(rune(text[j])) {
			j++
		}
		key := text[i:j]
		j = skipJSSpace(text, j)
		if key == "" || j >= len(text) || text[j] != '=' {
			if key == "" {
				j++ // a stray "/" or "="
			}
			i = j
			continue
		}
		j = skipJSSpace(text, j+1)
		if j >= len(text) {
			return nil, len(text), false, false
		}
		if q := text[j]; q == '"' || q == '\'' {
			k := strings.IndexByte(text[j+1:], q)
			if k < 0 {
				return nil, len(text), false, false
			}
			attrs[key] = decodeEntities(text[j+1 : j+1+k])
			i = j + 2 + k
			continue
		}
		k := j
		for k < len(text) && text[k] != '>' && !isJSSpace(rune(text[k])) && !strings.HasPrefix(text[k:], "/>") {
			k++
		}
		attrs[key] = decodeEntities(text[j:k])
		i = k
	}
}

// decodeEntities decodes the five XML entities and numeric character
// references; anything else is kept as written.
func decodeEntities(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		j := strings.IndexByte(s[:min(len(s), 12)], ';') // entities are short; never scan far
		if j < 0 {
			b.WriteByte('&')
			s = s[1:]
			continue
		}
		name := s[1:j]
		if r, ok := entity(name); ok {
			b.WriteString(r)
			s = s[j+1:]
			continue
		}
		b.WriteByte('&')
		s = s[1:]
	}
}

func entity(name string) (string, bool) {
	switch name {
	case "lt":
		return "<", true
	case "gt":
		return ">", true
	case "amp":
		return "&", true
	case "quot":
		return `"`, true
	case "apos":
		return "'", true
	}
	if strings.HasPrefix(name, "#") {
		var n uint64
		var err error
		if strings.HasPrefix(name, "#x") || strings.HasPrefix(name, "#X") {
			n, err = strconv.ParseUint(name[2:], 16, 32)
		} else {
			n, err = strconv.ParseUint(name[1:], 10, 32)
		}
		if err == nil && utf8.ValidRune(rune(n)) && n != 0 {
			return string(rune(n)), true
		}
	}
	return "", false
}
