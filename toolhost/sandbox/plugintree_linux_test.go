package sandbox

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// codeSearch searches as VCPToolBox's CodeSearcher does: from the project
// root (the nearest folder up with a package.json) through every folder
// below, skipping what it may not read without a word, and prints the
// files that hold its argument.
const codeSearch = `
import os, sys
root = os.getcwd()
while not os.path.exists(os.path.join(root, "package.json")) and root != "/":
    root = os.path.dirname(root)
for d, _, files in os.walk(root, onerror=lambda e: None):
    for f in files:
        try:
            if sys.argv[1] in open(os.path.join(d, f)).read():
                print(os.path.relpath(os.path.join(d, f), root))
        except OSError:
            pass
`

// TestPluginTreeProfiles: the plugins that read beyond their folder by
// design (PluginSourceViewer: the other plugins' folders; FileOperator
// with ALLOWED_DIRECTORIES=../..: the tree's root; CodeSearcher: the
// whole project) are refused it under default and answer under the
// profiles docs/sandbox.md gives them. CodeSearcher's refusal is silent:
// only the answer under none, compared, shows it.
func TestPluginTreeProfiles(t *testing.T) {
	t.Parallel()
	py := python(t)
	root := t.TempDir()
	plugins := filepath.Join(root, "Plugin")
	put(t, filepath.Join(root, "package.json"), `{"name":"vcptoolbox-like"}`)
	sibling := put(t, filepath.Join(plugins, "Sibling", "plugin-manifest.json"), `{"name":"Sibling","needle":1}`)
	own := filepath.Join(plugins, "Viewer")
	put(t, filepath.Join(own, "plugin-manifest.json"), `{"name":"Viewer","needle":2}`)
	e := newConfinedEnv(t, map[string]Spec{
		"plugin-sources": {Extends: Default, Read: []string{plugins}},
		"file-operator":  {Extends: Default, Write: []string{root}},
		"code-search":    {Extends: Default, Read: []string{root}},
	})
	e.dir = own

	t.Run("PluginSourceViewer", func(t *testing.T) {
		_, err := e.explained(t, Default, "cat", "../Sibling/plugin-manifest.json")
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(re.Fix, `read = ["`+filepath.Join(plugins, "Sibling")+`"]`) {
			t.Fatalf("under default: %v, want the sibling's folder refused and its grant offered", err)
		}
		if out, err := e.explained(t, "plugin-sources", "cat", "../Sibling/plugin-manifest.json"); err != nil || !strings.Contains(out, `"Sibling"`) {
			t.Errorf("under plugin-sources: %q, %v", out, err)
		}
	})
	t.Run("FileOperator ../..", func(t *testing.T) {
		write := "echo note > ../../notes.txt && cat ../../package.json"
		_, err := e.explained(t, Default, "sh", "-c", write)
		var re *RefusedError
		if !errors.As(err, &re) || len(re.Refusals) == 0 || !re.Refusals[0].Write {
			t.Fatalf("under default: %v, want the write at the tree's root refused", err)
		}
		if out, err := e.explained(t, "file-operator", "sh", "-c", write); err != nil || !strings.Contains(out, "vcptoolbox-like") {
			t.Errorf("under file-operator: %q, %v", out, err)
		}
	})
	t.Run("CodeSearcher", func(t *testing.T) {
		found := func(profile string) string {
			out, err := e.explained(t, profile, py, "-c", codeSearch, "needle")
			if err != nil {
				t.Fatalf("under %s: %v", profile, err)
			}
			return out
		}
		rel, _ := filepath.Rel(root, sibling)
		// The walk starts at the project's root, which default does not
		// let it list: nothing found, and nothing said.
		if out := found(Default); out != "" {
			t.Errorf("under default: %q, want nothing found (the tree refused, silently)", out)
		}
		if out := found(None); !strings.Contains(out, rel) {
			t.Errorf("under none: %q, want %s found", out, rel)
		}
		if out := found("code-search"); !strings.Contains(out, rel) {
			t.Errorf("under code-search: %q, want %s found", out, rel)
		}
	})
}
