package plugin

import (
	"maps"
	"slices"
	"testing"
)

func TestParseDotenv(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		want    map[string]string
		skipped []int
	}{
		{"plain", "A=1\nB = two \n", map[string]string{"A": "1", "B": "two"}, nil},
		{"export and blanks", "  export KEY=v\nexport\tK2=w\n", map[string]string{"KEY": "v", "K2": "w"}, nil},
		{"export as a key", "export=1\n", map[string]string{"export": "1"}, nil},
		{"comments", "# a comment\n  # indented\nA=1 # inline\nB=x#y\n", map[string]string{"A": "1", "B": "x"}, nil},
		{"commented assignment is off", "#KEY=v\n", map[string]string{}, nil},
		{"empty value", "A=\nB=  \n", map[string]string{"A": "", "B": ""}, nil},
		{"single quotes are literal", `A='x # y \n z'`, map[string]string{"A": `x # y \n z`}, nil},
		{"double quotes expand \\n and \\r only", `A="l1\nl2\r\tx"`, map[string]string{"A": "l1\nl2\r\\tx"}, nil},
		{"backticks", "A=`it's \"q\"`", map[string]string{"A": `it's "q"`}, nil},
		{"escaped quote kept", `A="say \"hi\""`, map[string]string{"A": `say \"hi\"`}, nil},
		{"quoted then comment", `A="v" # note`, map[string]string{"A": "v"}, nil},
		{"quote not closing cleanly", `A="v" tail`, map[string]string{"A": `"v" tail`}, nil},
		{"multi-line double quotes", "A=\"one\ntwo\"\nB=3\n", map[string]string{"A": "one\ntwo", "B": "3"}, nil},
		{"multi-line single quotes", "A='x\ny'\nC=4", map[string]string{"A": "x\ny", "C": "4"}, nil},
		{"unterminated quote is unquoted", "A=\"open\nB=2\n", map[string]string{"A": `"open`, "B": "2"}, nil},
		{"special key characters", "API@KEY#1=a\nX%&^+-.Y=b\n", map[string]string{"API@KEY#1": "a", "X%&^+-.Y": "b"}, nil},
		{"colon form", "A: 1\nB:2\n", map[string]string{"A": "1"}, []int{2}},
		{"later wins", "A=1\nA=2\n", map[string]string{"A": "2"}, nil},
		{"CRLF", "A=1\r\nB=\"x\r\ny\"\r\n", map[string]string{"A": "1", "B": "x\ny"}, nil},
		{"value keeps inner equals", "URL=http://h/?a=b&c=d\n", map[string]string{"URL": "http://h/?a=b&c=d"}, nil},
		{"junk lines reported by number", "A=1\nnot an assignment\n\n=3\nB=2\n", map[string]string{"A": "1", "B": "2"}, []int{2, 4}},
		{"line numbers after a multi-line value", "A=\"1\n2\n3\"\njunk\n", map[string]string{"A": "1\n2\n3"}, []int{4}},
		{"unicode value", "NAME=用户日程\n", map[string]string{"NAME": "用户日程"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := parseDotenv(c.src)
			if !maps.Equal(d.values, c.want) {
				t.Errorf("values %q, want %q", d.values, c.want)
			}
			if !slices.Equal(d.skipped, c.skipped) {
				t.Errorf("skipped lines %v, want %v", d.skipped, c.skipped)
			}
		})
	}
}

func TestSkippedTextNamesLinesNotValues(t *testing.T) {
	d := parseDotenv("SECRET_LOOKING junk\nA=1\n")
	got := d.skippedText("/p/config.env")
	if want := "/p/config.env: line 1: not KEY=VALUE; ignored"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func FuzzParseDotenv(f *testing.F) {
	for _, s := range []string{"A=1", "A=\"x\ny\"", "export B='q'", "#c\nC=`v` # x", "A=\"\\\"", "=\n\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		d := parseDotenv(src) // must not panic or loop
		for k := range d.values {
			if k == "" {
				t.Fatalf("empty key from %q", src)
			}
		}
	})
}
