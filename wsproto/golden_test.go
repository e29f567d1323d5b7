package wsproto

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.out from the current Encode")

// TestGolden decodes every testdata/golden/*.json frame, re-encodes it and
// compares the result with the matching .out file: the encoded frame, or
// "error: …" when Encode refuses the message (Unknown frames). File names
// start with the message type, or "unknown_" for frames Decode must return
// as Unknown. Run with -update to rewrite the .out files.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 10 {
		t.Fatalf("found only %d golden frames in testdata/golden", len(paths))
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			frame, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Decode(frame)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			_, isUnknown := m.(Unknown)
			if strings.HasPrefix(name, "unknown_") != isUnknown ||
				!isUnknown && !strings.HasPrefix(name, string(m.MessageType())) {
				t.Fatalf("decoded %T (type %q); the file name promises otherwise", m, m.MessageType())
			}

			encoded, encErr := Encode(m)
			got := append(bytes.Clone(encoded), '\n')
			if encErr != nil {
				got = []byte("error: " + encErr.Error() + "\n")
			}
			outPath := strings.TrimSuffix(path, ".json") + ".out"
			if *update {
				if err := os.WriteFile(outPath, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(outPath)
			if err != nil {
				t.Fatalf("%v (run go test ./wsproto -run TestGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("re-encoded frame differs from %s:\n got: %s\nwant: %s", outPath, got, want)
			}
			if isUnknown {
				return
			}
			again, err := Decode(encoded)
			if err != nil {
				t.Fatalf("Decode of the re-encoded frame: %v", err)
			}
			assertSameMessage(t, m, again)
		})
	}
}
