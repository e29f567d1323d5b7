package main

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/vcpnode/vcpnode/config"
)

// initConfigText is the config `vcpnode init --hub … --name … --plugins
// examples/Plugin` writes, as the README's first run makes it.
func initConfigText(t *testing.T) string {
	t.Helper()
	plugins, err := filepath.Abs(filepath.Join("..", "..", "examples", "Plugin"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := exampleConfig(configValues{URL: "ws://127.0.0.1:6005", Name: "laptop",
		KeyFile: filepath.Join(t.TempDir(), "key"), PluginDirs: []string{plugins}}, "written by init")
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// snippetSection is one table of a snippet: its header line ("" for the
// keys above every header) and the lines below it.
type snippetSection struct {
	header string
	body   []string
}

func snippetSections(snippet string) []snippetSection {
	secs := []snippetSection{{}}
	for line := range strings.SplitSeq(strings.TrimRight(snippet, "\n"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "[") {
			secs = append(secs, snippetSection{header: strings.TrimSpace(line)})
			continue
		}
		secs[len(secs)-1].body = append(secs[len(secs)-1].body, line)
	}
	return secs
}

// applySnippet does with snippet what the docs ask of a reader who has the
// config init wrote: a table that config already has is edited (the
// snippet's keys go under its header, replacing a key it sets already), a
// table it lacks is added at the end.
func applySnippet(base, snippet string) (string, error) {
	lines := strings.Split(base, "\n")
	for _, sec := range snippetSections(snippet) {
		if sec.header == "" {
			if strings.TrimSpace(strings.Join(sec.body, "")) != "" {
				return "", fmt.Errorf("keys above every table header: the config has headers, so they cannot be pasted")
			}
			continue
		}
		at := slices.Index(lines, sec.header)
		if at < 0 {
			lines = append(append(lines, "", sec.header), sec.body...)
			continue
		}
		end := len(lines)
		for i := at + 1; i < len(lines); i++ {
			if strings.HasPrefix(lines[i], "[") {
				end = i
				break
			}
		}
		for _, l := range sec.body {
			key, _, ok := strings.Cut(l, "=")
			if !ok || strings.HasPrefix(strings.TrimSpace(l), "#") {
				continue
			}
			key = strings.TrimSpace(key)
			for i := at + 1; i < end; i++ {
				if k, _, ok := strings.Cut(lines[i], "="); ok && strings.TrimSpace(k) == key && !strings.HasPrefix(lines[i], "#") {
					lines = slices.Delete(lines, i, i+1)
					end--
					break
				}
			}
		}
		lines = slices.Insert(lines, at+1, sec.body...)
	}
	return strings.Join(lines, "\n"), nil
}

// checkSnippetApplied applies a config snippet of the docs to the config
// init writes and checks the result: it parses strictly, and every value
// the snippet sets is the one in force.
func checkSnippetApplied(t *testing.T, base, where, snippet string) {
	t.Helper()
	merged, err := applySnippet(base, snippet)
	if err == nil {
		_, err = config.Parse([]byte(merged), where+" applied to the config init writes")
	}
	if err != nil {
		t.Errorf("%s: the snippet does not apply to the config init writes: %v", where, err)
		return
	}
	var want, got map[string]any
	if err := toml.Unmarshal([]byte(snippet), &want); err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	if err := toml.Unmarshal([]byte(merged), &got); err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	for _, diff := range notIn(want, got, "") {
		t.Errorf("%s: applied to the config init writes, %s", where, diff)
	}
}

// notIn lists the values of want that got does not hold the same.
func notIn(want, got map[string]any, prefix string) []string {
	var diffs []string
	for k, w := range want {
		g, ok := got[k]
		wm, wIsMap := w.(map[string]any)
		gm, gIsMap := g.(map[string]any)
		switch {
		case !ok:
			diffs = append(diffs, prefix+k+" is missing")
		case wIsMap && gIsMap:
			diffs = append(diffs, notIn(wm, gm, prefix+k+".")...)
		case !reflect.DeepEqual(w, g):
			diffs = append(diffs, fmt.Sprintf("%s%s is %v, not the snippet's %v", prefix, k, g, w))
		}
	}
	return diffs
}

// The application itself: a table init wrote is edited in place, a new
// one added, a key init set is replaced; a snippet pasted below the whole
// file instead is what the docs must not ask for.
func TestApplySnippet(t *testing.T) {
	base := initConfigText(t)
	snippet := "[files]\nroots = [\"/srv/a\"]\n\n[hub]\nname = \"other\"\n\n[tools.ReadFile]\nexpose = true\n"
	checkSnippetApplied(t, base, "test", snippet)
	merged, err := applySnippet(base, snippet)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(merged), "merged")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Files.Roots, []string{"/srv/a"}) || cfg.Hub.Name != "other" || cfg.Hub.URL != "ws://127.0.0.1:6005" || cfg.Tools["ReadFile"].Expose == nil {
		t.Errorf("applied: files %+v, hub %+v, tools %+v", cfg.Files, cfg.Hub, cfg.Tools)
	}
	if _, err := config.Parse([]byte(base+"\n"+snippet), "pasted"); err == nil || !strings.Contains(err.Error(), "first at line") {
		t.Errorf("pasted below the config: %v, want the duplicate table named with its first line", err)
	}
}
