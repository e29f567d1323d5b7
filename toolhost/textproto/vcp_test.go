package textproto

import (
	"encoding/json"
	"strings"
	"testing"
)

// call is a compact form of a VCP call for rule tests.
func call(c Call) string {
	var b strings.Builder
	b.WriteString(c.Tool)
	b.WriteString(" {")
	keys := make([]string, 0, len(c.Args))
	for k := range c.Args {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for i, k := range keys {
		var v string
		_ = json.Unmarshal(c.Args[k], &v)
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + ": " + v)
	}
	b.WriteString("}")
	return b.String()
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func calls(reply string, fuzzy bool) []string {
	var out []string
	for _, c := range ParseVCP(reply, fuzzy).Calls {
		out = append(out, call(c))
	}
	return out
}

const (
	S = "<<<[TOOL_REQUEST]>>>"
	E = "<<<[END_TOOL_REQUEST]>>>"
)

// TestSpecExamples are the examples of docs/vcp-parsing.md §5, one per row.
func TestSpecExamples(t *testing.T) {
	for _, tc := range []struct {
		name, reply  string
		strict, fuzz []string
	}{
		{"§5 row 1: trimmed values",
			S + " tool_name:「始」Weather「末」, city:「始」 Paris 「末」 " + E,
			[]string{"Weather {city: Paris}"}, []string{"Weather {city: Paris}"}},
		{"§5 row 2: two blocks, the last city wins",
			S + "tool_name:「始」W「末」,city:「始」A「末」" + E + "\n" + S + "tool_name:「始」W「末」,city:「始」B「末」,city:「始」C「末」" + E,
			[]string{"W {city: A}", "W {city: C}"}, []string{"W {city: A}", "W {city: C}"}},
		{"§5 row 3: only the block outside think tags",
			"<think>" + S + "tool_name:「始」In「末」" + E + "</think>" + S + "tool_name:「始」Out「末」" + E,
			[]string{"Out {}"}, []string{"Out {}"}},
		{"§5 row 4: x-y yields y",
			S + "tool_name:「始」T「末」, x-y:「始」1「末」" + E,
			[]string{"T {y: 1}"}, []string{"T {y: 1}"}},
		{"§5 row 5: fuzzy block markers",
			"<<[TOOL_REQUEST]>> tool_name:「始」T「末」 <<<<[END_TOOL_REQUEST]>>>>",
			nil, []string{"T {}"}},
		{"§5 row 6: no end marker",
			"text " + S + " tool_name:「始」T「末」",
			nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := calls(tc.reply, false); !equal(got, tc.strict) {
				t.Errorf("strict: %q, want %q", got, tc.strict)
			}
			if got := calls(tc.reply, true); !equal(got, tc.fuzz) {
				t.Errorf("fuzzy: %q, want %q", got, tc.fuzz)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRules checks one rule of docs/vcp-parsing.md per case.
func TestRules(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		fuzzy       bool
		want        []string
	}{
		{"§1 tags are case-insensitive with spaces and attributes", "< THINK a=\"1\" >" + S + "tool_name:「始」A「末」" + E + "</ Think >" + S + "tool_name:「始」B「末」" + E, false, []string{"B {}"}},
		{"§1 nesting and mixing think/thinking count together", "<think><thinking></think>" + S + "tool_name:「始」A「末」" + E + "</thinking>" + S + "tool_name:「始」B「末」" + E, false, []string{"B {}"}},
		{"§1 a closing tag at depth 0 is dropped alone", "</think>" + S + "tool_name:「始」A「末」" + E, false, []string{"A {}"}},
		{"§1 an unclosed tag discards everything after it", S + "tool_name:「始」A「末」" + E + "<thinking>" + S + "tool_name:「始」B「末」" + E, false, []string{"A {}"}},
		{"§1 thinker is no tag", "<thinker>" + S + "tool_name:「始」A「末」" + E, false, []string{"A {}"}},
		{"§1 tags inside values are removed too", S + "tool_name:「始」A「末」, v:「始」x<think>y</think>z「末」" + E, false, []string{"A {v: xz}"}},
		{"§2 search continues after the end marker", S + "tool_name:「始」A「末」" + E + E + S + "tool_name:「始」B「末」" + E, false, []string{"A {}", "B {}"}},
		{"§2 fuzzy markers are case-insensitive, 2-4 angles", "<<<<[tool_request]>> tool_name:「始」A「末」 <<[End_Tool_Request]>>>>", true, []string{"A {}"}},
		{"§2 strict mode ignores fuzzy markers", "<<[TOOL_REQUEST]>> tool_name:「始」A「末」 " + E, false, nil},
		{"§2 ESCAPE regions hide end markers", S + "tool_name:「始」A「末」, v:「始ESCAPE」" + E + "「末ESCAPE」" + E, false, []string{"A {v: " + E + "}"}},
		{"§2 escape variants in both modes", S + "tool_name:「始」A「末」, v:{始escape}x" + E + "{末ESCAPE」" + E, false, []string{"A {v: x" + E + "}"}},
		{"§2 an unclosed escape drops the block and stops", S + "tool_name:「始」A「末」, v:「始ESCAPE」" + E + S + "tool_name:「始」B「末」" + E, false, nil},
		{"§3.1 whitespace and commas are skipped", S + " ,, tool_name:「始」A「末」,,\n\t k:「始」v「末」" + E, false, []string{"A {k: v}"}},
		{"§3.2 a non-ASCII key yields nothing", S + "tool_name:「始」A「末」 键:「始」v「末」" + E, false, []string{"A {}"}},
		{"§3.3 no colon drops the key", S + "tool_name:「始」A「末」 k 「始」v「末」" + E, false, []string{"A {}"}},
		{"§3.3 space before the colon is allowed", S + "tool_name :「始」A「末」 k\t: 「始」v「末」" + E, false, []string{"A {k: v}"}},
		{"§3.4 no start marker drops the key", S + "tool_name:「始」A「末」 k: v「末」" + E, false, []string{"A {}"}},
		{"§3.4 the value runs to the first end marker", S + "tool_name:「始」A「末」 k:「始」a「始」b「末」c「末」" + E, false, []string{"A {k: a「始」b}"}},
		{"§3.4 fuzzy start shapes", S + "tool_name:{始}A{末} k:「始 anything」v「末 x}" + E, true, []string{"A {k: v}"}},
		{"§3.4 a fuzzy shape cannot cross a line", S + "tool_name:「始」A「末」 k:「始\n」v「末」" + E, true, []string{"A {}"}},
		{"§3.4 the earliest fuzzy end wins", S + "tool_name:「始」A「末」 k:「始」a{末}b「末」" + E, true, []string{"A {k: a}"}},
		{"§3.4 escape literals are restored", S + "tool_name:「始」A「末」 k:「始ESCAPE」<<<[TOOL_REQUEST_ESCAPE]>>>「始ESCAPE」{始ESCAPE}{始escape}「末ESCAPE」" + E, false, []string{"A {k: " + S + "「始」「始」{始escape}}"}},
		{"§3.5 a value without an end keeps earlier fields", S + "tool_name:「始」A「末」 k:「始」v「末」 j:「始」w " + E, false, []string{"A {k: v}"}},
		{"§4 values trimmed with JavaScript whitespace", S + "tool_name:「始」\u3000A\ufeff「末」 k:「始」\u00a0v\u2028「末」" + E, false, []string{"A {k: v}"}},
		{"§4 U+0085 is not JavaScript whitespace", S + "tool_name:「始」A「末」 k:「始」\u0085v「末」" + E, false, []string{"A {k: \u0085v}"}},
		{"§4 the last tool_name wins", S + "tool_name:「始」A「末」 tool_name:「始」B「末」" + E, false, []string{"B {}"}},
		{"§4 an empty last tool_name means no call", S + "tool_name:「始」A「末」 tool_name:「始」 「末」" + E, false, nil},
		{"§4 control fields are taken out", S + "tool_name:「始」A「末」 archery:「始」true「末」 ink:「始」x「末」 river:「始」r「末」 vref:「始」v「末」" + E, false, []string{"A {}"}},
		{"§4 valet is copied to maid", S + "tool_name:「始」A「末」 valet:「始」V「末」" + E, false, []string{"A {maid: V, valet: V}"}},
		{"§4 an empty maid counts as unset", S + "tool_name:「始」A「末」 maid:「始」「末」 valet:「始」V「末」" + E, false, []string{"A {maid: V, valet: V}"}},
		{"§4 a set maid is kept", S + "tool_name:「始」A「末」 maid:「始」M「末」 valet:「始」V「末」" + E, false, []string{"A {maid: M, valet: V}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := calls(tc.reply, tc.fuzzy); !equal(got, tc.want) {
				t.Errorf("calls %q, want %q", got, tc.want)
			}
		})
	}
}

func TestControlFields(t *testing.T) {
	r := ParseVCP(S+"tool_name:「始」A「末」 archery:「始」no_reply「末」 ink:「始」mark_history「末」 river:「始」 last:3 「末」"+E, false)
	c := r.Calls[0]
	if !c.Archery || !c.ArcheryNoReply || !c.MarkHistory || c.River == nil || *c.River != "last:3" || c.Vref != nil {
		t.Fatalf("control fields: %+v", c)
	}
}

func TestRejectedLinesAndReasons(t *testing.T) {
	reply := "one\n" + S + "\n" + E + "\n<think>\n" + S + "tool_name:「始」X「末」" + E + "</think>\n" + S + "k:「始」v「末」" + E + "\n" + S + "\ntool_name:「始」A「末」"
	r := ParseVCP(reply, false)
	want := []string{
		"2 the block is empty (§4)",
		"5 inside a reasoning block",
		"6 no tool_name field (§4)",
		"7 no end marker",
	}
	if len(r.Rejected) != len(want) || len(r.Calls) != 0 {
		t.Fatalf("calls %v, rejected %+v", r.Calls, r.Rejected)
	}
	for i, w := range want {
		got := strings.TrimSpace(strings.Join([]string{itoa(r.Rejected[i].Line), r.Rejected[i].Reason}, " "))
		if !strings.HasPrefix(got, w) {
			t.Errorf("rejected[%d] = %q, want %q…", i, got, w)
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
