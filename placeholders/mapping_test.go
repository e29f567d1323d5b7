package placeholders

import (
	"maps"
	"testing"
)

func TestMapOutput(t *testing.T) {
	one := []string{"{{A}}"}
	two := []string{"{{A}}", "{{B}}"}
	fold := `{"vcp_dynamic_fold":true,"plugin_description":"d","fold_blocks":[{"threshold":0.5,"content":"x"}]}`
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
		{"per-key with braces", two, `{"{{A}}":"a","{{B}}":"b"}`, map[string]string{"{{A}}": "a", "{{B}}": "b"}},
		{"per-key without braces", two, `{"A":"a","B":"b"}`, map[string]string{"{{A}}": "a", "{{B}}": "b"}},
		{"per-key mixed forms", two, `{"A":"a","{{B}}":"b"}`, map[string]string{"{{A}}": "a", "{{B}}": "b"}},
		{"per-key subset keeps the rest", two, `{"B":"b"}`, map[string]string{"{{B}}": "b"}},
		{"per-key single placeholder", one, `{"A":" a "}`, map[string]string{"{{A}}": "a"}},
		{"per-key non-strings JSON-encoded", two, `{"A":{"x": [1, 2]},"B":3.5}`, map[string]string{"{{A}}": `{"x":[1,2]}`, "{{B}}": "3.5"}},
		{"per-key booleans", two, `{"A":true,"B":false}`, map[string]string{"{{A}}": "true", "{{B}}": "false"}},
		{"per-key null and empty keep", two, `{"A":null,"B":""}`, nil},
		{"per-key null keeps only that key", two, `{"A":null,"B":"b"}`, map[string]string{"{{B}}": "b"}},
		{"undeclared key: whole text", two, `{"A":"a","C":"c"}`, map[string]string{"{{A}}": `{"A":"a","C":"c"}`, "{{B}}": `{"A":"a","C":"c"}`}},
		{"both forms of one key: whole text", two, `{"A":"1","{{A}}":"2"}`, map[string]string{"{{A}}": `{"A":"1","{{A}}":"2"}`, "{{B}}": `{"A":"1","{{A}}":"2"}`}},
		{"fold object stays a string", one, "\n" + fold + "\n", map[string]string{"{{A}}": fold}},
		{"empty object is text", one, `{}`, map[string]string{"{{A}}": `{}`}},
		{"array is text", one, `["A"]`, map[string]string{"{{A}}": `["A"]`}},
		{"broken JSON is text", one, `{"A":`, map[string]string{"{{A}}": `{"A":`}},
		{"key that is not a name is text", one, `{"a b":"x"}`, map[string]string{"{{A}}": `{"a b":"x"}`}},
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
