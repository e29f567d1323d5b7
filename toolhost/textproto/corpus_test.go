package textproto

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/corpus from this parser")

// serverCall is one call as scripts/vcp-parser-oracle.js writes what the
// real VCPToolBox parser returned.
type serverCall struct {
	Name           string            `json:"name"`
	Args           map[string]string `json:"args"`
	Archery        bool              `json:"archery"`
	ArcheryNoReply bool              `json:"archeryNoReply"`
	MarkHistory    bool              `json:"markHistory"`
	River          *string           `json:"river"`
	Vref           *string           `json:"vref"`
}

func corpusFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	return files
}

// TestCorpusAgreesWithServer compares the VCP calls found in every reply of
// the corpus, strict and fuzzy, with what the real server's parser found
// (the .server.json files, made by scripts/vcp-parser-oracle.js from
// VCPToolBox 3c070506).
func TestCorpusAgreesWithServer(t *testing.T) {
	for _, file := range corpusFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			reply := readFile(t, file)
			var want struct{ Strict, Fuzzy []serverCall }
			if err := json.Unmarshal([]byte(readFile(t, strings.TrimSuffix(file, ".txt")+".server.json")), &want); err != nil {
				t.Fatal(err)
			}
			for _, mode := range []struct {
				fuzzy bool
				want  []serverCall
			}{{false, want.Strict}, {true, want.Fuzzy}} {
				got := asServerCalls(t, ParseVCP(reply, mode.fuzzy).Calls)
				if len(got) == 0 && len(mode.want) == 0 {
					continue
				}
				if !reflect.DeepEqual(got, mode.want) {
					g, _ := json.MarshalIndent(got, "", "  ")
					w, _ := json.MarshalIndent(mode.want, "", "  ")
					t.Errorf("fuzzy=%v: calls differ from the server's\ngot:  %s\nwant: %s", mode.fuzzy, g, w)
				}
			}
		})
	}
}

func asServerCalls(t *testing.T, calls []Call) []serverCall {
	t.Helper()
	var out []serverCall
	for _, c := range calls {
		sc := serverCall{Name: c.Tool, Args: map[string]string{}, Archery: c.Archery, ArcheryNoReply: c.ArcheryNoReply, MarkHistory: c.MarkHistory}
		for k, v := range c.Args {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				t.Fatalf("VCP arg %s is not a string: %s", k, v)
			}
			sc.Args[k] = s
		}
		sc.River, sc.Vref = c.River, c.Vref
		out = append(out, sc)
	}
	return out
}

// TestCorpusGolden checks everything the parser reports for the corpus, in
// every format, lines and reasons included, against the reviewed .golden files.
func TestCorpusGolden(t *testing.T) {
	for _, file := range corpusFiles(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			reply := readFile(t, file)
			got := map[string]Result{
				"strict": Parse(reply, Options{}),
				"fuzzy":  Parse(reply, Options{Fuzzy: true}),
			}
			matchGolden(t, strings.TrimSuffix(file, ".txt")+".golden", asJSON(t, got))
		})
	}
}

// asJSON is v as the golden files hold it: indented, <, > and & as they are.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	s, err := indentJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return s + "\n"
}

// matchGolden compares got with the golden file, or with -update writes it.
func matchGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := readFile(t, golden); got != want {
		t.Errorf("%s differs (go test -run %s -update rewrites it; review the diff):\ngot:\n%s", golden, t.Name(), got)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRandomRepliesAgreeWithServer is a differential test: 1500 replies
// made of marker fragments (well-formed, fuzzy, escaped, broken, in think
// tags) by scripts/vcp-parser-oracle.js, each with the calls the real
// server's parser found in strict and fuzzy mode.
func TestRandomRepliesAgreeWithServer(t *testing.T) {
	var cases []struct {
		Text          string
		Strict, Fuzzy []serverCall
	}
	if err := json.Unmarshal([]byte(readFile(t, "testdata/random.server.json")), &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 1000 {
		t.Fatalf("only %d cases", len(cases))
	}
	failed := 0
	for i, c := range cases {
		for _, mode := range []struct {
			fuzzy bool
			want  []serverCall
		}{{false, c.Strict}, {true, c.Fuzzy}} {
			got := asServerCalls(t, ParseVCP(c.Text, mode.fuzzy).Calls)
			if len(got) == 0 && len(mode.want) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, mode.want) {
				failed++
				if failed <= 5 {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(mode.want)
					t.Errorf("case %d fuzzy=%v %q:\ngot:  %s\nwant: %s", i, mode.fuzzy, c.Text, g, w)
				}
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d parses differ from the server's", failed, 2*len(cases))
	}
}

// TestFormatsGolden checks what Parse finds in one reply per format
// (testdata/formats/FORMAT.txt), every format on, against the reviewed
// .golden files: calls, repaired flags, rejections with lines and reasons.
func TestFormatsGolden(t *testing.T) {
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			file := filepath.Join("testdata", "formats", string(f)+".txt")
			res := Parse(readFile(t, file), Options{})
			matchGolden(t, strings.TrimSuffix(file, ".txt")+".golden", asJSON(t, res))
			found := false
			for _, c := range res.Calls {
				found = found || c.Format == f
			}
			if !found {
				t.Errorf("no %s call in %s", f, file)
			}
		})
	}
}
