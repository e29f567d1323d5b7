package textproto

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// seedCorpus adds every corpus reply to f.
func seedCorpus(f *testing.F, extra ...string) {
	files, _ := filepath.Glob("testdata/corpus/*.txt")
	more, _ := filepath.Glob("testdata/formats/*.txt")
	files = append(files, more...)
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err == nil {
			f.Add(string(b))
		}
	}
	for _, e := range extra {
		f.Add(e)
	}
}

// checkResult holds for any reply: lines and offsets inside it, a tool
// name on every call, valid JSON arguments, reasons on rejections.
func checkResult(t *testing.T, reply string, r Result, format Format) {
	t.Helper()
	lines := strings.Count(reply, "\n") + 1
	for _, c := range r.Calls {
		if c.Format != format || c.Tool == "" || c.Line < 1 || c.Line > lines || c.Offset < 0 || c.Offset > len(reply) {
			t.Fatalf("bad call %+v in %q", c, reply)
		}
		for k, v := range c.Args {
			if !json.Valid(v) {
				t.Fatalf("arg %q is not valid JSON: %s", k, v)
			}
			if (format == FormatVCP || format == FormatXML) && (len(v) == 0 || v[0] != '"') {
				t.Fatalf("%s arg %q is not a string: %s", format, k, v)
			}
		}
	}
	for _, rj := range r.Rejected {
		if rj.Format != format || rj.Reason == "" || rj.Line < 1 || rj.Line > lines {
			t.Fatalf("bad rejection %+v in %q", rj, reply)
		}
	}
}

func FuzzParseVCP(f *testing.F) {
	seedCorpus(f, S+"tool_name:「始」A「末」"+E, "<think>"+S, S+"k:「始ESCAPE」", "<<[tool_request]>>{始 x」", "x-y:「始」")
	f.Fuzz(func(t *testing.T, reply string) {
		for _, fuzzy := range []bool{false, true} {
			r := Parse(reply, Options{Fuzzy: fuzzy, Formats: []Format{FormatVCP}})
			checkResult(t, reply, r, FormatVCP)
			if utf8.ValidString(reply) {
				for _, c := range r.Calls {
					for k := range c.Args {
						if k == "" || strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
							t.Fatalf("key %q is not ASCII \\w (§3 rule 2)", k)
						}
					}
				}
			}
		}
	})
}

func FuzzParseXML(f *testing.F) {
	seedCorpus(f, `<function_calls><invoke name="a"><parameter name="b">&lt;<![CDATA[x]]></parameter></invoke></function_calls>`,
		"<function_calls><invoke name='x' /><parameter", "&#x110000;&#0;&")
	f.Fuzz(func(t *testing.T, reply string) {
		checkResult(t, reply, Parse(reply, Options{Formats: []Format{FormatXML}}), FormatXML)
	})
}

func FuzzParseJSON(f *testing.F) {
	seedCorpus(f, `{"tool_name":"a","parameters":{"x":[1,{"tool_name":"b"}]}}`, `[{"tool_name":"a"}`, `{"a":"\"tool_name\":"}`)
	f.Fuzz(func(t *testing.T, reply string) {
		checkResult(t, reply, Parse(reply, Options{Formats: []Format{FormatJSON}}), FormatJSON)
	})
}

func FuzzParseToolCode(f *testing.F) {
	seedCorpus(f, `<tool_code>{'name': 'a', arguments: {x: [1,],}}</tool_code>`, "<tool_code>```json\n[{\"name\":\"a\"}]\n```</tool_code>", "<tool_code <tool_code/>")
	f.Fuzz(func(t *testing.T, reply string) {
		checkResult(t, reply, Parse(reply, Options{Formats: []Format{FormatToolCode}}), FormatToolCode)
	})
}

func FuzzParseFunctionCall(f *testing.F) {
	seedCorpus(f, `<function_call>{"name": "a", "arguments": "{\"x\": 1}"}</function_call>`, "<function_call>{name: 'a' // c\n}</function_call>")
	f.Fuzz(func(t *testing.T, reply string) {
		checkResult(t, reply, Parse(reply, Options{Formats: []Format{FormatFunctionCall}}), FormatFunctionCall)
	})
}

func FuzzParseToolCalls(f *testing.F) {
	seedCorpus(f, `{"tool_calls": [{"id": "c", "function": {"name": "a", "arguments": "{'x': 1,}"}}]}`, `{tool_calls: [{name: a}]`, "{'tool_calls': /* x */ []}")
	f.Fuzz(func(t *testing.T, reply string) {
		checkResult(t, reply, Parse(reply, Options{Formats: []Format{FormatToolCalls}}), FormatToolCalls)
	})
}

func FuzzParseAll(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, reply string) {
		r := Parse(reply, Options{Fuzzy: true})
		for i := 1; i < len(r.Calls); i++ {
			if r.Calls[i].Offset < r.Calls[i-1].Offset {
				t.Fatalf("calls out of order: %+v", r.Calls)
			}
		}
	})
}
