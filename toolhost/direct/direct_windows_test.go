package direct

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On Windows a direct plugin is refused at load with the reason (no fd 3
// for the host's channel), even with a node executable at hand; the test
// binary stands in for node, which is never started.
func TestWindowsRefusesDirectPluginsWithAReason(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp("", "direct-test-") // not t.TempDir: its RemoveAll fails under Wine 8
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "Fast")
	t.Cleanup(func() {
		for _, p := range []string{filepath.Join(dir, "index.js"), filepath.Join(dir, "plugin-manifest.json"), dir, root} {
			if err := os.Remove(p); err != nil {
				t.Error(err)
			}
		}
	})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tp := testPlugins["Fast"]
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(tp.files["index.js"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin-manifest.json"), []byte(`{"name":"Fast",`+tp.manifest+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newTestHost(t, Options{})
	l := h.Load(scanDirect(t, root), Settings{Node: self})
	if len(l.Tools) != 0 || len(l.Unsupported) != 1 || !strings.Contains(l.Unsupported[0].Reason, "descriptor 3") {
		t.Fatalf("tools %d, unsupported %+v", len(l.Tools), l.Unsupported)
	}
	if h.Running() != 0 {
		t.Errorf("%d hosts running", h.Running())
	}
}
