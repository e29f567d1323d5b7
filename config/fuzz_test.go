package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any config file gives a Config that validates, or an *Error
// with at least one problem, never a panic; parsing is deterministic, and
// a config that was accepted redacts without trouble.
func FuzzParse(f *testing.F) {
	if example, err := os.ReadFile(filepath.Join("..", "config.example.toml")); err == nil {
		f.Add(example)
	}
	for _, s := range []string{
		"",
		"[hub]\nurl = \"ws://127.0.0.1:5890\"\nkey = \"k\"\n",
		"[hub]\nping_interval = 45\n",
		"[hub]\nping_interval = \"-1s\"\nurl = 3\n[node]\nexposed_tools = [1, \"x\"]\n",
		"[tools.VideoGen]\nexpose = false\ntimeout = \"5m\"\napproval = \"ask\"\n",
		"[plugins]\ndirs = [\"relative\"]\nmax_output_bytes = 1\n",
		"[[placeholders.static]]\nname = \"X\"\nvalue = \"1\"\nrefresh = \"1s\"\n",
		"url = \"x\"\n[hub\n",
		"[hub]\nurl = \"a\"\n[hub]\nurl = \"b\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.toml")
		if err != nil {
			var cerr *Error
			if !errors.As(err, &cerr) || len(cerr.Problems) == 0 {
				t.Fatalf("Parse error %T %q is not an *Error with problems", err, err)
			}
			if _, err2 := Parse(data, "fuzz.toml"); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("Parse is not deterministic: %q then %v", err, err2)
			}
			return
		}
		if verr := cfg.Validate(); verr != nil {
			t.Fatalf("Parse accepted a config that does not validate: %v", verr)
		}
		_ = cfg.Redacted()
	})
}
