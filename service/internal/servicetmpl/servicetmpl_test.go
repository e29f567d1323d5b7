package servicetmpl

import (
	"errors"
	"strings"
	"testing"
	"text/template"
)

var testFuncs = map[string]func(string) string{"up": strings.ToUpper, "q": func(s string) string { return `"` + s + `"` }}

// The subset the service files use gives what text/template gives for the
// same text: the templates render unchanged now that the units and plists
// are expanded here.
func TestExpandMatchesTextTemplate(t *testing.T) {
	fields := map[string]string{"A": "alpha", "B": "", "C": "x y"}
	texts := []string{
		"",
		"no actions\n",
		"{{up .A}}",
		"a={{up .A}} c={{q .C}}\n",
		"start\n{{- if .A}}\nA is {{up .A}}\n{{- end}}\nafter\n",
		"start\n{{- if .B}}\nB is {{q .B}}\n{{- end}}\nafter\n",
		"x {{- if .A -}} \n\t y {{- end}}z",
		"{{if .A}}{{if .B}}both{{end}}only A{{end}}|{{if .B}}{{if .A}}never{{end}}{{end}}.",
		"{{if .C}}[{{q .C}}]{{end}}",
		"{{ up .A }} and {{- up .C -}} !",
	}
	tfuncs := template.FuncMap{}
	for name, fn := range testFuncs {
		tfuncs[name] = fn
	}
	for _, text := range texts {
		got, err := Expand(text, fields, testFuncs)
		if err != nil {
			t.Errorf("Expand(%q): %v", text, err)
			continue
		}
		var want strings.Builder
		tmpl := template.Must(template.New("t").Funcs(tfuncs).Option("missingkey=error").Parse(text))
		if err := tmpl.Execute(&want, fields); err != nil {
			t.Fatalf("text/template on %q: %v", text, err)
		}
		if got != want.String() {
			t.Errorf("Expand(%q) = %q, text/template gives %q", text, got, want.String())
		}
	}
}

func TestExpandRefusesWhatItDoesNotKnow(t *testing.T) {
	fields := map[string]string{"A": "alpha"}
	for _, tt := range []struct{ text, want string }{
		{"{{up .Missing}}", `line 1: no field "Missing"`},
		{"\n\n{{if .Missing}}x{{end}}", `line 3: no field "Missing"`},
		{"{{nope .A}}", `no function "nope"`},
		{"{{up A}}", `"A" is not a field`},
		{"{{.A}}", "unknown action {{.A}}"},
		{"{{range .A}}{{end}}", `no function "range"`},
		{"{{up .A}} {{up .A", "unclosed action"},
		{"{{if .A}}open", "if without end"},
		{"x\n{{end}}", "line 2: end without if"},
		{"{{up .A .A}}", "unknown action"},
	} {
		_, err := Expand(tt.text, fields, testFuncs)
		if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Expand(%q) = %v, want ErrTemplate with %q", tt.text, err, tt.want)
		}
	}
}

// A skipped branch still names only known fields and functions: a typo
// there is found whatever the values.
func TestExpandChecksSkippedBranches(t *testing.T) {
	_, err := Expand("{{if .A}}{{up .Typo}}{{end}}", map[string]string{"A": ""}, testFuncs)
	if !errors.Is(err, ErrTemplate) {
		t.Fatalf("got %v, want ErrTemplate for the field in the skipped branch", err)
	}
}
