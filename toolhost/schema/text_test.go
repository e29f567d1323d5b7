package schema

import (
	"encoding/json"
	"testing"
)

func TestParamDocAndExample(t *testing.T) {
	for _, tc := range []struct {
		p            Param
		doc, example string
	}{
		{Param{Name: "path", Type: TypeString, Required: true, Description: " the image,\n  relative "},
			"path (string, required): the image, relative", "<path>"},
		{Param{Name: "mode", Type: TypeString, Enum: []json.RawMessage{[]byte(`"fit"`), []byte(`"fill"`)}},
			`mode (string, optional, one of "fit", "fill")`, "fit"},
		{Param{Name: "opts", Type: TypeObject, Default: json.RawMessage(`{ "tag": "<b>" }`)},
			`opts (object, optional, default {"tag":"<b>"})`, `{"tag":"<b>"}`},
		{Param{Name: "out-file", Alias: "out_file"}, `out_file (any type, optional) (the parameter "out-file")`, "<out_file>"},
		{Param{Name: "n", Type: TypeInteger}, "n (integer, optional)", "1"},
		{Param{Name: "x", Type: TypeNumber}, "x (number, optional)", "1.5"},
		{Param{Name: "b", Type: TypeBoolean}, "b (boolean, optional)", "true"},
		{Param{Name: "a", Type: TypeArray}, "a (array, optional)", `["a", "b"]`},
		{Param{Name: "o", Type: TypeObject}, "o (object, optional)", `{"key": "value"}`},
	} {
		if got := tc.p.Doc(); got != tc.doc {
			t.Errorf("Doc of %s = %q, want %q", tc.p.Name, got, tc.doc)
		}
		if got := tc.p.Example(); got != tc.example {
			t.Errorf("Example of %s = %q, want %q", tc.p.Name, got, tc.example)
		}
	}
}
