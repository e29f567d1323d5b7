package textproto

import (
	"strings"
	"testing"
)

// TestNoSilentMisses: every text that looks like a call is either a call
// (mended where the model's intent is clear) or a rejection with its line
// and reason — never nothing.
func TestNoSilentMisses(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		format      Format
		// wantArgs, when set, is the one call's arguments; otherwise one
		// rejection is wanted whose reason holds wantReason.
		wantArgs   string
		wantReason string
		wantLine   int
	}{
		{name: "json string never closes", reply: "Calling it:\n" + `{"tool_name": "x", "parameters": {"a": "b}}` + "\nDone.\n",
			format: FormatJSON, wantArgs: `{"a":"b"}`, wantLine: 2},
		{name: "tool_calls string never closes", reply: `{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "x", "arguments": {"a": "b}}}]}` + "\nmore prose\n",
			format: FormatToolCalls, wantArgs: `{"a":"b"}`, wantLine: 1},
		{name: "json string runs to the end", reply: "prose\n" + `{"tool_name": "x", "parameters": {"a": "b`,
			format: FormatJSON, wantReason: "a string opened on line 2 runs to the end of the reply", wantLine: 2},
		{name: "json string beyond repair", reply: `{"tool_name": "x", "parameters": "b}` + "\n",
			format: FormatJSON, wantReason: "never closes before its line break", wantLine: 1},
		{name: "json raw line break in a string", reply: "{\"tool_name\": \"x\", \"parameters\": {\"a\": \"b\nc\"}}\n",
			format: FormatJSON, wantArgs: `{"a":"b\nc"}`, wantLine: 1},
		{name: "xml literal end tag in a value", reply: "<function_calls>\n<invoke name=\"write_file\">\n<parameter name=\"path\">a.md</parameter>\n" +
			"<parameter name=\"content\">close it with </parameter> and go on\nto the end</parameter>\n</invoke>\n</function_calls>\n",
			format: FormatXML, wantArgs: `{"content":"close it with </parameter> and go on\nto the end","path":"a.md"}`, wantLine: 2},
		{name: "xml end tag then stray text", reply: "<function_calls>\n<invoke name=\"write_file\">\n" +
			"<parameter name=\"content\">close it with </parameter> and the rest is lost\n</invoke>\n</function_calls>\n",
			format: FormatXML, wantReason: `text follows the </parameter> of parameter "content" on line 3`, wantLine: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Parse(tc.reply, Options{})
			if tc.wantArgs != "" {
				if len(res.Calls) != 1 || len(res.Rejected) != 0 {
					t.Fatalf("want one call: %+v", res)
				}
				c := res.Calls[0]
				indented, err := indentJSON(c.Args)
				if err != nil {
					t.Fatal(err)
				}
				args := compactJSON(indented)
				if c.Format != tc.format || c.Line != tc.wantLine || string(args) != tc.wantArgs {
					t.Errorf("call %s line %d args %s, want %s line %d %s", c.Format, c.Line, args, tc.format, tc.wantLine, tc.wantArgs)
				}
				return
			}
			if len(res.Calls) != 0 || len(res.Rejected) != 1 {
				t.Fatalf("want one rejection: %+v", res)
			}
			r := res.Rejected[0]
			if r.Format != tc.format || r.Line != tc.wantLine || !strings.Contains(r.Reason, tc.wantReason) {
				t.Errorf("rejected %s line %d %q, want %s line %d …%s…", r.Format, r.Line, r.Reason, tc.format, tc.wantLine, tc.wantReason)
			}
		})
	}
}

// TestFencedCallsAreExamples: a call inside a Markdown code fence is found
// and marked an example; the same call outside a fence is not, and a fence
// inside a tag's payload does not make its call one.
func TestFencedCallsAreExamples(t *testing.T) {
	reply := "To delete a file you would write:\n```xml\n<function_calls><invoke name=\"rm\"><parameter name=\"path\">/</parameter></invoke></function_calls>\n```\n" +
		"~~~~\n<<<[TOOL_REQUEST]>>>\ntool_name:「始」Shown「末」\n<<<[END_TOOL_REQUEST]>>>\n~~~\nstill inside: ~~~ closes only a run as long\n~~~~\n" +
		"Now for real:\n<function_calls><invoke name=\"ls\"></invoke></function_calls>\n" +
		"<tool_code>\n```json\n{\"name\": \"tc\", \"arguments\": {}}\n```\n</tool_code>\n" +
		"```\n{\"tool_name\": \"never_closed_fence\", \"parameters\": {}}\n"
	res := Parse(reply, Options{})
	want := map[string]bool{"rm": true, "Shown": true, "ls": false, "tc": false, "never_closed_fence": true}
	if len(res.Calls) != len(want) {
		t.Fatalf("calls: %+v", res)
	}
	for _, c := range res.Calls {
		if c.Example != want[c.Tool] {
			t.Errorf("%s (line %d): example %v, want %v", c.Tool, c.Line, c.Example, want[c.Tool])
		}
	}
}

func TestParseFormats(t *testing.T) {
	got, err := ParseFormats([]string{"xml", " vcp", "xml"})
	if err != nil || len(got) != 2 || got[0] != FormatXML || got[1] != FormatVCP {
		t.Errorf("%v %v", got, err)
	}
	if _, err := ParseFormats([]string{"yaml"}); err == nil || !strings.Contains(err.Error(), "tool_calls") {
		t.Errorf("unknown format: %v", err)
	}
}
