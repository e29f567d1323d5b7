package textproto

import (
	"fmt"
	"strings"
	"testing"
)

// mib builds a reply of at least 1 MiB by repeating unit.
func mib(unit string) string {
	return strings.Repeat(unit, (1<<20)/len(unit)+1)
}

var benchReplies = map[string]string{
	// Realistic: prose, a think block, one well-formed block per paragraph.
	"vcp": mib("Some prose about the task, with a colon: and commas, and 「quotes」.\n<think>plan the call</think>\n" +
		S + "\ntool_name:「始」Search「末」,\nquery:「始」go parsers「末」,\nlimit:「始」10「末」\n" + E + "\n"),
	"vcp-fuzzy": mib("prose\n<<[TOOL_REQUEST]>>\ntool_name:{始}Search{末},\nquery:「始 q」go「末 x}\n<<<<[END_TOOL_REQUEST]>>>>\n"),
	"xml": mib("prose\n<function_calls>\n<invoke name=\"search\">\n<parameter name=\"q\">go &amp; parsers</parameter>\n" +
		"<parameter name=\"code\"><![CDATA[if a < b {}]]></parameter>\n</invoke>\n</function_calls>\n"),
	"json":          mib("prose\n```json\n{\"tool_name\": \"search\", \"parameters\": {\"q\": \"go\", \"n\": 10, \"f\": [1, {\"a\": \"}\"}]}}\n```\n"),
	"json-repaired": mib("prose, it's\n{tool_name: 'search', parameters: {q: 'go', n: 10, // why\n f: [1, 2,],},}\n"),
	"tool_calls":    mib("prose\n{\"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"search\", \"arguments\": \"{\\\"q\\\": \\\"go\\\"}\"}}]}\n"),
	"tool_code":     mib("prose\n<tool_code>\n{\"name\": \"search\", \"arguments\": {\"q\": \"go\", \"n\": 10}}\n</tool_code>\n"),
	"function_call": mib("prose\n<function_call>\n{\n  \"name\": \"getTime\",\n  \"arguments\": {\"offset_ms\": -86400000}\n}\n</function_call>\n"),
	// Adversarial: start markers that never end, fields that never end,
	// think tags never closed, braces nested a million deep.
	"vcp-unterminated":    S + mib("tool_name:「始」A「末」 k:「始」"),
	"vcp-many-escapes":    S + mib("k:「始ESCAPE」x「末ESCAPE」"),
	"think-unclosed":      mib("<think "),
	"json-deep":           mib(`{"tool_name":"a","parameters":{"x":`),
	"xml-unclosed-param":  "<function_calls><invoke name=\"a\">" + mib("<parameter name=\"p\">x"),
	"xml-unclosed-params": mib("<function_calls><invoke name=\"a\"><parameter name=\"p\">x</invoke></function_calls>\n"),
	"tool_code-unclosed":  mib("<tool_code>{\"name\": \"a\"\n"),
	"json-unterminated":   mib(`{'tool_name': 'a', 'parameters': {'x': 'don't `),
}

// BenchmarkParse parses each 1 MiB reply with every format on; MB/s is
// what docs/textproto.md reports.
func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"vcp", "vcp-fuzzy", "xml", "json", "json-repaired", "tool_calls", "tool_code", "function_call",
		"vcp-unterminated", "vcp-many-escapes", "think-unclosed", "json-deep", "json-unterminated", "xml-unclosed-param", "xml-unclosed-params", "tool_code-unclosed"} {
		reply := benchReplies[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(reply, Options{Fuzzy: strings.Contains(name, "fuzzy")})
			}
		})
	}
}

// BenchmarkParseScaling parses the same kinds of reply at 1 MiB and
// 4 MiB: equal MB/s at both sizes is what linear means.
func BenchmarkParseScaling(b *testing.B) {
	units := map[string]string{
		"vcp":              "prose: a, b.\n" + S + "\ntool_name:「始」Search「末」,\nquery:「始」go「末」\n" + E + "\n",
		"vcp-unterminated": "tool_name:「始」A「末」 k:「始」",
		"json-deep":        `{"tool_name":"a","parameters":{"x":`,
		"vcp-with-json":    S + "tool_name:「始」A「末」, p:「始」{\"tool_name\": \"X\"}「末」" + E + "\n",
		"json":             "```json\n{\"tool_name\": \"s\", \"parameters\": {\"q\": \"go\"}}\n```\n",
		"xml":              "<function_calls><invoke name=\"s\"><parameter name=\"q\">go</parameter></invoke></function_calls>\n",
		"json-repaired":    "{tool_name: 'search', parameters: {q: 'go',},}\n",
		"tool_calls":       "{\"tool_calls\": [{\"function\": {\"name\": \"s\", \"arguments\": \"{}\"}}]}\n",
		"tool_code":        "<tool_code>{\"name\": \"s\", \"arguments\": {\"q\": \"go\"}}</tool_code>\n",
		"function_call":    "<function_call>{'name': 's', 'arguments': {}}</function_call>\n",
	}
	for _, name := range []string{"vcp", "vcp-unterminated", "vcp-with-json", "json-deep", "xml", "json", "json-repaired", "tool_calls", "tool_code", "function_call"} {
		for _, size := range []int{1 << 20, 4 << 20} {
			unit := units[name]
			reply := strings.Repeat(unit, size/len(unit)+1)
			if name == "vcp-unterminated" {
				reply = S + reply
			}
			b.Run(fmt.Sprintf("%s/%dKiB", name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(reply)))
				for b.Loop() {
					Parse(reply, Options{})
				}
			})
		}
	}
}
