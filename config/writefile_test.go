package config

import (
	"os"
	"path/filepath"
	"testing"
)

// A file written twice has its content and the mode asked for, and no
// temporary file is left beside it.
func TestWriteFileAtomicNeverWidensTheMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	for i, content := range []string{"one\n", "two\n"} {
		if err := WriteFileAtomic(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		fi, _ := os.Stat(path)
		if string(data) != content || fi.Mode().Perm() != 0o600 {
			t.Errorf("write %d: %q mode %04o", i, data, fi.Mode().Perm())
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}
