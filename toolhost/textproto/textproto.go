// Package textproto turns a model's reply into tool calls. It reads the
// VCP TOOL_REQUEST blocks exactly as the VCPToolBox server parses them
// (docs/vcp-parsing.md, rule numbers cited as §N), the
// <function_calls><invoke> XML, the <tool_code> and <function_call> tags
// around {"name", "arguments"} JSON (the XML_Tag strategy and DeepChat),
// DeepChat's {"tool_name", "parameters"} JSON objects and the JSON_Strict
// {"tool_calls": […]} objects; JSON a model meant but did not
// write strictly is mended and the call marked repaired. Where a block is
// not a call, it says why and on which line instead of dropping it
// silently. It does no I/O.
package textproto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Format names a call format.
type Format string

// The formats Parse reads.
const (
	FormatVCP          Format = "vcp"
	FormatXML          Format = "xml"
	FormatToolCode     Format = "tool_code"
	FormatFunctionCall Format = "function_call"
	FormatJSON         Format = "json"
	FormatToolCalls    Format = "tool_calls"
)

// Formats lists every format, in the order Parse claims text for them.
var Formats = []Format{FormatVCP, FormatXML, FormatToolCode, FormatFunctionCall, FormatJSON, FormatToolCalls}

// ParseFormats reads format names (as Formats spells them) into the
// formats they name; an unknown name is an error that lists the known ones.
func ParseFormats(names []string) ([]Format, error) {
	out := make([]Format, 0, len(names))
	for _, n := range names {
		f := Format(strings.TrimSpace(n))
		if !slices.Contains(Formats, f) {
			known := make([]string, len(Formats))
			for i, k := range Formats {
				known[i] = string(k)
			}
			return nil, fmt.Errorf("format %q is not one of %s", n, strings.Join(known, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// Call is one tool call found in a reply.
type Call struct {
	Format Format `json:"format"`
	// Line is the 1-based line of the call's first character in the reply.
	Line int    `json:"line"`
	Tool string `json:"tool"`
	// ID is the call's own id where the block carries one: a tool_calls
	// entry's or a tag payload's "id", a VCP block's request_id (as AIO Hub
	// reads it), a {"tool_name"} object's "request_id" or "id", an XML
	// invoke's id attribute. EnsureIDs generates one for the others.
	ID string `json:"id,omitempty"`
	// Args as JSON values: always strings for VCP and XML (the server sends
	// them so), any JSON for the JSON formats.
	Args map[string]json.RawMessage `json:"args"`
	// Repaired is true when the call's JSON was not valid as written and
	// was mended (single quotes, trailing commas, unquoted keys, comments…).
	Repaired bool `json:"repaired,omitempty"`

	// The VCP control fields the server takes out of the arguments (§4).
	Archery        bool `json:"archery,omitempty"`
	ArcheryNoReply bool `json:"archeryNoReply,omitempty"`
	MarkHistory    bool `json:"markHistory,omitempty"`
	// River and Vref are nil when the block has no such field.
	River *string `json:"river,omitempty"`
	Vref  *string `json:"vref,omitempty"`

	// Example is true when the call stands inside a Markdown code fence:
	// text that shows a call rather than makes one. Parse reports it; a
	// caller that runs calls leaves it alone unless told otherwise.
	Example bool `json:"example,omitempty"`

	// Notes are parts of the call the server reads differently from what the
	// model probably meant (a value without an end marker…).
	Notes []string `json:"notes,omitempty"`

	// Offset is the byte offset of Line's character in the reply.
	Offset int `json:"-"`
}

// Rejected is a block that looks like a call but is not one.
type Rejected struct {
	Format Format `json:"format"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
	Offset int    `json:"-"`
}

// Result is what a parse found, each list in the order of the reply.
type Result struct {
	Calls    []Call     `json:"calls"`
	Rejected []Rejected `json:"rejected"`
}

// Options steer Parse.
type Options struct {
	// Fuzzy switches on the server's fuzzy marker matching (§2, §3 rule 4);
	// it is off by default on the server too.
	Fuzzy bool
	// Formats limits the formats read; empty means all of them.
	Formats []Format
}

// Parse finds the calls of every format in reply. Reasoning blocks are
// removed first for every format (§1). Text inside a VCP block is not read
// again as XML or JSON, nor text inside an XML block as JSON, so one call is
// never found twice; the tagged formats' text is not read again as JSON.
func Parse(reply string, opt Options) Result {
	formats := opt.Formats
	if len(formats) == 0 {
		formats = Formats
	}
	st := stripReasoning(reply)
	lines := newLineIndex(reply)
	var res Result
	var claimed []span // in stripped coordinates
	if slices.Contains(formats, FormatVCP) {
		r, spans := parseVCP(st, opt.Fuzzy, lines)
		res.add(r)
		claimed = append(claimed, spans...)
	}
	if slices.Contains(formats, FormatXML) {
		r, spans := parseXML(st, newSpanSet(claimed), lines)
		res.add(r)
		claimed = append(claimed, spans...)
	}
	for _, f := range []Format{FormatToolCode, FormatFunctionCall} {
		if slices.Contains(formats, f) {
			r, spans := parseTagged(st, f, newSpanSet(claimed), lines)
			res.add(r)
			claimed = append(claimed, spans...)
		}
	}
	if slices.Contains(formats, FormatJSON) || slices.Contains(formats, FormatToolCalls) {
		res.add(parseJSON(st, formats, newSpanSet(claimed), lines))
	}
	slices.SortStableFunc(res.Calls, func(a, b Call) int { return a.Offset - b.Offset })
	markExamples(reply, res.Calls)
	slices.SortStableFunc(res.Rejected, func(a, b Rejected) int { return a.Offset - b.Offset })
	if res.Calls == nil {
		res.Calls = []Call{}
	}
	if res.Rejected == nil {
		res.Rejected = []Rejected{}
	}
	return res
}

func (r *Result) add(o Result) {
	r.Calls = append(r.Calls, o.Calls...)
	r.Rejected = append(r.Rejected, o.Rejected...)
}

// span is a half-open byte range.
type span struct{ start, end int }

// spanSet answers "does [start, end) overlap a claimed span" in O(log n),
// so that checking every candidate stays linear overall.
type spanSet struct {
	spans  []span // sorted by start
	maxEnd []int  // maxEnd[i] is the largest end among spans[:i+1]
}

func newSpanSet(spans []span) spanSet {
	s := spanSet{spans: slices.Clone(spans)}
	slices.SortFunc(s.spans, func(a, b span) int { return a.start - b.start })
	s.maxEnd = make([]int, len(s.spans))
	for i, sp := range s.spans {
		s.maxEnd[i] = sp.end
		if i > 0 {
			s.maxEnd[i] = max(s.maxEnd[i], s.maxEnd[i-1])
		}
	}
	return s
}

func (s spanSet) overlaps(start, end int) bool {
	// j is the number of spans starting before end.
	j, _ := slices.BinarySearchFunc(s.spans, end, func(sp span, e int) int {
		if sp.start < e {
			return -1
		}
		return 1
	})
	return j > 0 && s.maxEnd[j-1] > start
}

// lineIndex maps byte offsets of the reply to 1-based lines.
type lineIndex []int // offsets of line starts

func newLineIndex(s string) lineIndex {
	idx := lineIndex{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			idx = append(idx, i+1)
		}
	}
	return idx
}

func (l lineIndex) line(off int) int {
	n, found := slices.BinarySearch(l, off)
	if found {
		return n + 1
	}
	return n
}

// stringJSON encodes s as a JSON string, keeping <, > and & readable.
func stringJSON(s string) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(strings.ToValidUTF8(s, "\uFFFD")) // a string always encodes
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}
