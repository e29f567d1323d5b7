//go:build unix

package plugin

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// Preloaded modules are imported by a waiting interpreter before its call;
// the one difference a script may see is that they are already in
// sys.modules. These tests compare such calls with cold ones.

// preloadPy reports which of the modules it imports were imported before
// it ran, then what it and the modules saw: everything but "before" must
// be the same warm with preload and cold.
const preloadPy = `import sys
before = sorted(m for m in ("helper", "json", "email.mime.text", "urllib.parse") if m in sys.modules)
import json, helper, urllib.parse
import email.mime.text
data = sys.stdin.read()
out = {
    "before": before, "argv": sys.argv, "path0": sys.path[0], "name": __name__, "file": __file__,
    "helper": helper.INFO, "modules": sorted(sys.modules), "quoted": urllib.parse.quote(data),
    "mime": email.mime.text.MIMEText("x").get_content_type(), "args": json.loads(data),
}
print(json.dumps({"status": "success", "result": out}, sort_keys=True))
`

// helperPy is a module of the plugin's folder: what it sees while it is
// imported must be what it sees in a cold run.
const helperPy = `import os, sys
INFO = {"file": __file__, "argv": list(sys.argv), "path0": sys.path[0], "cwd": os.getcwd(), "name": __name__}
`

// preloadAll is what the preload plugin is warmed with.
var preloadAll = []string{"json", "helper", "email.mime.text", "urllib.parse"}

// writePreload makes the plugin Preload in root.
func writePreload(t testing.TB, root string) {
	dir := filepath.Join(root, "Preload")
	writeFile(t, dir, manifestFile, `{"name":"Preload","pluginType":"synchronous",
		"entryPoint":{"command":"python3 preload.py an-arg"}}`)
	writeFile(t, dir, "preload.py", preloadPy)
	writeFile(t, dir, "helper.py", helperPy)
}

// preloadedBefore is the "before" of a preload plugin's result.
func preloadedBefore(t *testing.T, result string) []string {
	t.Helper()
	var got struct{ Before []string }
	if err := json.Unmarshal([]byte(result), &got); err != nil {
		t.Fatalf("result %s: %v", result, err)
	}
	return got.Before
}

// TestWarmPreloadMatchesCold: calls of a warm plugin whose preload lists
// the modules its script imports (standard ones, and one of its folder)
// give the cold calls' results byte for byte, but that the modules were
// already imported; the probe and the example UnitConverter, with json
// preloaded, are byte-identical.
func TestWarmPreloadMatchesCold(t *testing.T) {
	h := warmHost(t, Options{})
	root := pluginRoot(t)
	writePreload(t, root)
	writeProbe(t, root)
	copyDir(t, filepath.Join("..", "..", "examples", "Plugin", "UnitConverter"), filepath.Join(root, "UnitConverter"))
	set := scan(t, h, root)
	pre, probe, units := findTool(t, set, "Preload"), findTool(t, set, "WarmProbe"), findTool(t, set, "UnitConverter")

	run := func() (pres, others []string) {
		for i := range 8 {
			if len(h.pools) > 0 {
				waitWarm(t, h, 3)
			}
			args := map[string]string{"n": strconv.Itoa(i), "text": "a b/ü"}
			res, err := call(context.Background(), pre, args)
			pres = append(pres, outcome(t, res, err))
			res, err = call(context.Background(), probe, args)
			others = append(others, outcome(t, res, err))
			res, err = call(context.Background(), units, map[string]string{"command": "Convert", "value": strconv.Itoa(i * 3), "from": "kg", "to": "lb"})
			others = append(others, outcome(t, res, err))
		}
		return pres, others
	}
	coldPre, coldOther := run()
	cfg := WarmConfig{Languages: []string{WarmPython},
		Preload: map[string][]string{"Preload": preloadAll, "WarmProbe": {"json"}, "UnitConverter": {"json"}}}
	if notes := h.Warm(set, cfg); len(notes) > 0 {
		t.Fatalf("notes: %q", notes)
	}
	before := h.WarmCalls()
	warmPre, warmOther := run()
	if got := h.WarmCalls() - before; got != uint64(3*len(coldPre)) {
		t.Errorf("%d of %d calls ran warm", got, 3*len(coldPre))
	}
	for i := range coldPre {
		if b := preloadedBefore(t, coldPre[i]); slices.Contains(b, "helper") {
			t.Fatalf("cold call %d: helper imported before the script: %q", i, b)
		}
		if b := preloadedBefore(t, warmPre[i]); !slices.Equal(b, []string{"email.mime.text", "helper", "json", "urllib.parse"}) {
			t.Errorf("warm call %d: preloaded before the script %q, want every module of preload", i, b)
		}
		strip := func(s string) string {
			return strings.Replace(s, asJSON(t, preloadedBefore(t, s)), "<before>", 1)
		}
		if strip(coldPre[i]) != strip(warmPre[i]) {
			t.Errorf("preload call %d differs:\ncold: %s\nwarm: %s", i, coldPre[i], warmPre[i])
		}
	}
	for i := range coldOther {
		if coldOther[i] != warmOther[i] {
			t.Errorf("call %d of the probe or UnitConverter differs:\ncold: %s\nwarm: %s", i, coldOther[i], warmOther[i])
		}
	}
	t.Logf("a warm preload result: %s", warmPre[0])
}

// TestWarmPreloadFailureRunsCold: a preload naming a module that does not
// exist, or one that fails while it is imported, makes the pool give up at
// once with the import's error in the log; calls run cold and succeed, and
// no interpreter is left.
func TestWarmPreloadFailureRunsCold(t *testing.T) {
	for _, tt := range []struct{ name, module, why string }{
		{"missing", "no_such_module_for_vcpnode", "cannot import no_such_module_for_vcpnode: ModuleNotFoundError"},
		{"raising", "broken", "cannot import broken: RuntimeError: broken on purpose"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := warmHost(t, Options{})
			var logs testlog.Buffer
			h.log = zerolog.New(&logs)
			root := pluginRoot(t)
			writePreload(t, root)
			writeFile(t, filepath.Join(root, "Preload"), "broken.py", "raise RuntimeError('broken on purpose')\n")
			set := scan(t, h, root)
			if notes := h.Warm(set, WarmConfig{Tools: map[string]bool{"Preload": true},
				Preload: map[string][]string{"Preload": {"json", tt.module}}}); len(notes) > 0 {
				t.Fatalf("notes: %q", notes)
			}
			testwait.For(t, "the pool to give up", func() bool {
				pools := h.WarmPools()
				return len(pools) == 1 && pools[0].Cold && h.Running() == 0
			})
			for _, want := range []string{"a module of this plugin's preload cannot be imported; its calls run cold", tt.why} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("log lacks %q:\n%s", want, logs.String())
				}
			}
			res, err := call(context.Background(), findTool(t, set, "Preload"), map[string]string{"n": "1"})
			if err != nil {
				t.Fatal(err)
			}
			if b := preloadedBefore(t, asJSON(t, res)); slices.Contains(b, "helper") {
				t.Errorf("the cold call saw helper preloaded: %q", b)
			}
			if h.WarmCalls() != 0 {
				t.Error("a call ran warm")
			}
		})
	}
}

// TestWarmPreloadChangeRebuildsThePool: warming again with another preload
// replaces every waiting interpreter (the old ones are collected) and the
// next call sees the new preload.
func TestWarmPreloadChangeRebuildsThePool(t *testing.T) {
	h := warmHost(t, Options{})
	root := pluginRoot(t)
	writePreload(t, root)
	set := scan(t, h, root)
	tool := findTool(t, set, "Preload")
	warmWith := func(preload []string) []string {
		t.Helper()
		if notes := h.Warm(set, WarmConfig{Tools: map[string]bool{"Preload": true}, Size: 2,
			Preload: map[string][]string{"Preload": preload}}); len(notes) > 0 {
			t.Fatalf("notes: %q", notes)
		}
		waitWarm(t, h, 2)
		res, err := call(context.Background(), tool, nil)
		if err != nil {
			t.Fatal(err)
		}
		return preloadedBefore(t, asJSON(t, res))
	}
	if got := warmWith([]string{"json"}); slices.Contains(got, "helper") || !slices.Contains(got, "json") {
		t.Errorf("preload json: the script saw %q imported", got)
	}
	waitWarm(t, h, 2)
	old := waitingPids(h)
	if got := warmWith([]string{"json", "helper"}); !slices.Contains(got, "helper") {
		t.Errorf("preload json, helper: the script saw %q imported", got)
	}
	for _, pid := range old {
		if !proctreetest.Collected(pid) {
			t.Errorf("interpreter %d of the old preload still there", pid)
		}
	}
}

// TestWarmPreloadNames: the bootstrap gets only module names, as string
// literals; anything else is refused before an interpreter starts.
func TestWarmPreloadNames(t *testing.T) {
	for _, name := range []string{"json", "xml.etree.ElementTree", "_private", "a1.b_2"} {
		if why := PreloadProblem(name); why != "" {
			t.Errorf("PreloadProblem(%q) = %q", name, why)
		}
	}
	for _, name := range []string{"", "1json", "json.", ".json", "a..b", "os; import x", `a"b`, "a b", "modulé", "-m"} {
		if PreloadProblem(name) == "" {
			t.Errorf("PreloadProblem(%q) accepted it", name)
		}
		if _, err := pythonProgramFor([]string{"json", name}); err == nil {
			t.Errorf("pythonProgramFor accepted %q", name)
		}
	}
	prog, err := pythonProgramFor([]string{"json", "xml.etree.ElementTree"})
	if err != nil || !strings.Contains(prog, "\n    preload = (\"json\", \"xml.etree.ElementTree\", )\n") {
		t.Errorf("pythonProgramFor: %v\n%s", err, prog)
	}
	if _, err := pythonProgramFor(make([]string, MaxPreload+1)); err == nil {
		t.Error("pythonProgramFor accepted too many modules")
	}
}

// TestWarmPreloadIsForPython: a Node.js plugin with a preload runs warm
// without it, and says so.
func TestWarmPreloadIsForPython(t *testing.T) {
	h := nodeHost(t, Options{})
	root := pluginRoot(t)
	dir := filepath.Join(root, "Js")
	writeFile(t, dir, manifestFile, `{"name":"Js","pluginType":"synchronous","entryPoint":{"command":"node js.js"}}`)
	writeFile(t, dir, "js.js", "console.log('{}');\n")
	set := scan(t, h, root)
	notes := h.Warm(set, WarmConfig{Tools: map[string]bool{"Js": true}, Preload: map[string][]string{"Js": {"json"}}})
	if want := []string{`plugin "Js": preload is for Python plugins; it is ignored`}; !slices.Equal(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	waitWarm(t, h, 1)
}
