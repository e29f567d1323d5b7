package placeholders

import (
	"maps"
	"testing"
)

func TestMapOutput(t *testing.T) {
	one := []string{"{{A}}"}
	two := []string{"{{A}}", "{{B}}"}
	fold := `{"vcp_dynamic_fold":true,"plugin_description":"d","fold_blocks":[{"threshold":0.5,"content":"x"}]}`
	bare := []string{"A", "B"}
	mixed := []string{"{{A}}", "B"}
	cases := []struct {
		name     string
		declared []string
		output   string
		want     map[string]string // nil: keep every previous value
	}{
		{"plain text feeds every key", two, "  sunny\n", map[string]string{"{{A}}": "sunny", "{{B}}": "sunny"}},
		{"empty output keeps", two, "", nil},
		{"blank output keeps", two, " \n\t", nil},
		{"no declared keys", nil, "text", nil},
		{"per-key, spelled as declared", two, `{"{{A}}":"a","{{B}}":"b"}`, map[string]string{"{{A}}": "a", "{{B}}": "b"}},
		{"per-key, bare as declared", bare, `{"A":"a","B":"b"}`, map[string]string{"{{A}}": "a", "{{B}}": "b"}},
		{"per-key, each as declared", mixed, `{"{{A}}":"a","B":"b"}`, map[string]string{"{{A}}": "a", "{{B}}": "b"}},
		// The official node matches the spelling exactly: a map keyed
		// without braces feeds placeholders declared with braces whole.
		{"other spelling: whole text", two, `{"A":"a","B":"b"}`, map[string]string{"{{A}}": `{"A":"a","B":"b"}`, "{{B}}": `{"A":"a","B":"b"}`}},
		{"braces where bare declared: whole text", bare, `{"{{A}}":"a"}`, map[string]string{"{{A}}": `{"{{A}}":"a"}`, "{{B}}": `{"{{A}}":"a"}`}},
		{"a key missing gets the whole text", two, `{"{{B}}":"b"}`, map[string]string{"{{A}}": `{"{{B}}":"b"}`, "{{B}}": "b"}},
		{"per-key single placeholder", one, `{"{{A}}":" a "}`, map[string]string{"{{A}}": "a"}},
		{"per-key non-strings JSON-encoded", two, `{"{{A}}":{"x": [1, 2]},"{{B}}":3.5}`, map[string]string{"{{A}}": `{"x":[1,2]}`, "{{B}}": "3.5"}},
		{"true is JSON, false the whole text", two, `{"{{A}}":true,"{{B}}":false}`, map[string]string{"{{A}}": "true", "{{B}}": `{"{{A}}":true,"{{B}}":false}`}},
		{"null, empty and 0 the whole text", []string{"A", "B", "C"}, `{"A":null,"B":"","C":0}`,
			map[string]string{"{{A}}": `{"A":null,"B":"","C":0}`, "{{B}}": `{"A":null,"B":"","C":0}`, "{{C}}": `{"A":null,"B":"","C":0}`}},
		{"undeclared key beside", two, `{"{{A}}":"a","C":"c"}`, map[string]string{"{{A}}": "a", "{{B}}": `{"{{A}}":"a","C":"c"}`}},
		{"fold object stays a string", one, "\n" + fold + "\n", map[string]string{"{{A}}": fold}},
		{"fold object per key stays a fold", two, `{"{{A}}":` + fold + `,"{{B}}":"b"}`, map[string]string{"{{A}}": fold, "{{B}}": "b"}},
		{"empty object is text", one, `{}`, map[string]string{"{{A}}": `{}`}},
		{"array is text", one, `["A"]`, map[string]string{"{{A}}": `["A"]`}},
		{"broken JSON is text", one, `{"A":`, map[string]string{"{{A}}": `{"A":`}},
		{"JSON string is text", one, `"A"`, map[string]string{"{{A}}": `"A"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := MapOutput(c.declared, c.output)
			if !maps.Equal(got, c.want) || (got == nil) != (c.want == nil) {
				t.Fatalf("MapOutput(%v, %q) = %#v, want %#v", c.declared, c.output, got, c.want)
			}
		})
	}
}

func FuzzMapOutput(f *testing.F) {
	f.Add(`{"A":"a","B":{"x":1}}`)
	f.Add(`{"vcp_dynamic_fold":true}`)
	f.Add("plain")
	f.Fuzz(func(t *testing.T, output string) {
		declared := []string{"{{A}}", "{{B}}"}
		for k, v := range MapOutput(declared, output) {
			if k != "{{A}}" && k != "{{B}}" {
				t.Fatalf("value for undeclared key %q", k)
			}
			if v == "" {
				t.Fatalf("empty value for %q", k)
			}
		}
	})
}
