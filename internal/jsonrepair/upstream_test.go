package jsonrepair

import (
	"errors"
	"testing"

	"github.com/go-json-experiment/json"
	upstream "github.com/kaptinlin/jsonrepair"
)

// repairCorpus is malformed JSON of the kinds models write, and regular
// expression literals (the one place this copy differs from upstream).
var repairCorpus = []string{
	`{a:2}`, `{'a':'b'}`, `{"a":1,}`, `[1,2,]`, `{"a":"b"`, `[1,2`, `{"a":`, `{"a":tru`,
	`{"a": True, "b": None, "c": False}`, "```json\n{\"a\":1}\n```", "{\"a\":1} // note",
	"/* c */ {\"a\":1}", `{"a":"it's"}`, `{"a":"x"y"}`, `{"a":1}{"b":2}`, `[1 2 3]`,
	`{"a":[1,{"b":2]}`, `"abc`, `abc`, `{url:https://www.example.com/}`, `{"a":NaN}`,
	`{"a":.5,"b":2.,"c":-}`, `{"a":"\u00"}`, `{"a":"line
break"}`, "{\"a\":\"tab\there\"}", `[/ab+c/]`, `{"re":/a"b\/c/gi}`, `/x\y/`,
	"{\"re\":/\x01\x1f\x7f<>&\u2028\u2029é/}", `[/unterminated`, `{"a":"b" "c":"d"}`,
	`{"a":1 "b":2}`, `[..., 1]`, `{"a":"\x"}`, "\u201cquoted\u201d", `{"a":undefined}`,
	`callback({"a":1});`, `{"a":"b"+"c"}`, `{"a":ObjectId("x")}`, `{"a":1,"a":2}`,
	`{"a":{"b":{"c":[[[`, `[{"a":1},,{"b":2}]`, `{,}`, `{"a"}`, ``, ` `, `}`, `[`,
}

func TestRepairMatchesUpstream(t *testing.T) {
	for _, in := range repairCorpus {
		sameAsUpstream(t, in)
	}
}

func FuzzRepairMatchesUpstream(f *testing.F) {
	for _, in := range repairCorpus {
		f.Add(in)
	}
	f.Fuzz(sameAsUpstream)
}

func sameAsUpstream(t *testing.T, in string) {
	got, gotErr := Repair(in)
	want, wantErr := upstream.Repair(in)
	if got != want || (gotErr == nil) != (wantErr == nil) {
		t.Errorf("Repair(%q) = %q, %v; upstream gives %q, %v", in, got, gotErr, want, wantErr)
		return
	}
	if gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Errorf("Repair(%q) fails with %q; upstream with %q", in, gotErr, wantErr)
	}
	var e *Error
	if gotErr != nil && !errors.As(gotErr, &e) {
		t.Errorf("Repair(%q) error %T is not an *Error", in, gotErr)
	}
}

// quoteJSON writes what upstream wrote through go-json-experiment's
// json.Marshal.
func TestQuoteJSONMatchesMarshal(t *testing.T) {
	inputs := []string{"", "plain", `"q" \ /`, "<>&", "\u2028\u2029", "\x7f", "é中😀", "\ufffd", "bad\xffutf8"}
	for c := range 0x20 {
		inputs = append(inputs, "a"+string(rune(c))+"b")
	}
	for _, in := range inputs {
		// Invalid UTF-8 is an error to Marshal; Repair never quotes it (its
		// text is runes), and quoteJSON replaces it as a rune conversion does.
		want, err := json.Marshal(string([]rune(in)))
		if err != nil {
			t.Fatal(err)
		}
		if got := quoteJSON(in); got != string(want) {
			t.Errorf("quoteJSON(%q) = %s, json.Marshal gives %s", in, got, want)
		}
	}
}
