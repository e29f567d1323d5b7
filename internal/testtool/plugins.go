package testtool

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// WritePlugin makes dir/folder with a manifest and the given files. The
// manifest comes last, through a rename, as an editor or an unzip would
// leave it: a folder watcher never sees half of it.
func WritePlugin(t testing.TB, dir, folder, manifest string, files map[string]string) {
	t.Helper()
	path := filepath.Join(dir, folder)
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(path, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(path, ".manifest.tmp")
	if err := os.WriteFile(tmp, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(path, "plugin-manifest.json")); err != nil {
		t.Fatal(err)
	}
}

// SyncManifest is the manifest of a synchronous stdio plugin that runs
// AnswerScript.
func SyncManifest(name, description string) string {
	return fmt.Sprintf(`{"name":%q,"displayName":%q,"pluginType":"synchronous","description":%q,
"entryPoint":{"command":"sh answer.sh"},"communication":{"protocol":"stdio","timeout":5000}}`, name, name, description)
}

// AnswerScript (answer.sh) answers every call with its folder's name.
const AnswerScript = `cat >/dev/null; printf '{"status":"success","result":"answered by %s"}' "$(basename "$PWD")"`
