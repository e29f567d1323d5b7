package textproto

import (
	"encoding/json"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost"
)

// CallTemplate writes one block per command that the parser reads back as
// a call of that tool and command, with every parameter of a typed command
// (required first) and a plugin example's own arguments and values.
func TestCallTemplate(t *testing.T) {
	specs := promptSpecs(t)
	plugin := toolhost.Spec{Name: "Lone", Commands: []toolhost.Command{{Command: "Go"}}}
	// Commands with no example whose descriptions show the call form, as
	// many VCP plugins write them.
	block := func(fields string) string { return "<<<[TOOL_REQUEST]>>>\n" + fields + "\n<<<[END_TOOL_REQUEST]>>>" }
	calc := toolhost.Spec{Name: "Calc", Commands: []toolhost.Command{{Command: "CalcRequest",
		Description: "Computes. Call it so:\n" + block("tool_name:「始」Calc「末」,\nexpression:「始」1+1「末」") + "\nOther tools: " + block("tool_name:「始」Other「末」,\nx:「始」1「末」")}}}
	diary := toolhost.Spec{Name: "Diary", Commands: []toolhost.Command{
		{Command: "write", Description: "Writes an entry.\n" + block("tool_name:「始」Diary「末」,\ncommand:「始」write「末」,\ntext:「始」today「末」")},
		{Command: "read", Description: "Reads a day; write first, as in " + block("tool_name:「始」Diary「末」,\ncommand:「始」write「末」,\ntext:「始」today「末」")},
	}}
	for _, tc := range []struct {
		spec toolhost.Spec
		cmd  int
		want string
		args map[string]string
	}{
		{specs[0], 0, "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Weather「末」\ncommand:「始」Now「末」\ncity:「始」Paris「末」\n<<<[END_TOOL_REQUEST]>>>",
			map[string]string{"command": "Now", "city": "Paris"}},
		// An example without markers, for the second of two commands.
		{specs[0], 1, "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Weather「末」\ncommand:「始」Forecast「末」\ncity:「始」Paris「末」\ndays:「始」3「末」\n<<<[END_TOOL_REQUEST]>>>",
			map[string]string{"command": "Forecast", "city": "Paris", "days": "3"}},
		{specs[1], 1, "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Files「末」\ncommand:「始」move「末」\nfrom:「始」<from>「末」\nto:「始」<to>「末」\n<<<[END_TOOL_REQUEST]>>>",
			map[string]string{"command": "move", "from": "<from>", "to": "<to>"}},
		{specs[2], 0, "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Search「末」\nq:「始」<q>「末」\nadditionalProperties:「始」true「末」\n<<<[END_TOOL_REQUEST]>>>",
			map[string]string{"q": "<q>", "additionalProperties": "true"}},
		// No example: the command, so that the plugin knows what to run.
		{plugin, 0, "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Lone「末」\ncommand:「始」Go「末」\n<<<[END_TOOL_REQUEST]>>>",
			map[string]string{"command": "Go"}},
		// No example: the call of this tool its description shows, not
		// another tool's; its identifier is no argument the call shows.
		{calc, 0, "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Calc「末」\nexpression:「始」1+1「末」\n<<<[END_TOOL_REQUEST]>>>",
			map[string]string{"expression": "1+1"}},
		{diary, 0, "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Diary「末」\ncommand:「始」write「末」\ntext:「始」today「末」\n<<<[END_TOOL_REQUEST]>>>",
			map[string]string{"command": "write", "text": "today"}},
		// A description that shows another command's call lends nothing.
		{diary, 1, "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Diary「末」\ncommand:「始」read「末」\n<<<[END_TOOL_REQUEST]>>>",
			map[string]string{"command": "read"}},
	} {
		got := CallTemplate(tc.spec, tc.spec.Commands[tc.cmd])
		if got != tc.want {
			t.Errorf("%s command %d:\n%s\nwant\n%s", tc.spec.Name, tc.cmd, got, tc.want)
		}
		calls := Parse(got, Options{Formats: []Format{FormatVCP}}).Calls
		if len(calls) != 1 || calls[0].Tool != tc.spec.Name || len(calls[0].Args) != len(tc.args) {
			t.Fatalf("%s command %d parses as %+v", tc.spec.Name, tc.cmd, calls)
		}
		for k, v := range tc.args {
			var s string
			if json.Unmarshal(calls[0].Args[k], &s) != nil || s != v {
				t.Errorf("%s command %d: %s = %s, want %q", tc.spec.Name, tc.cmd, k, calls[0].Args[k], v)
			}
		}
	}
}
