package plugin

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestScanDescribesDirectPlugins: a hybridservice folder becomes a
// DirectPlugin with the stdio environment, a typed initialize config and the
// tool spec; the hub key and the global file's keys stay out of the config.
func TestScanDescribesDirectPlugins(t *testing.T) {
	root := pluginRoot(t)
	folder := filepath.Join(root, "Hyb")
	writeFile(t, folder, manifestFile, `{"name":"Hyb","displayName":"Hybrid","pluginType":"hybridservice",
"entryPoint":{"script":"./src/index.js"},"communication":{"protocol":"direct","timeout":7000},"hasApiRoutes":true,
"configSchema":{"PORTS":"integer","ON":{"type":"boolean","default":"True"},"NAME":"string","BAD":"integer"},
"capabilities":{"invocationCommands":[{"command":"Ping","description":"d","example":"e"}]}}`)
	writeFile(t, folder, configEnvFile, "PORTS=80x\nNAME=plug\nEXTRA=kept\nBAD=zz\nDebugMode=True\n")
	global := writeFile(t, t.TempDir(), "config.env", "GLOBAL_ONLY=g\nVCP_Key=secret\n")
	set := scan(t, newHost(t, Options{EnvFile: global}), root)
	if len(set.Direct) != 1 || len(set.Tools) != 0 {
		t.Fatalf("direct %v tools %v", set.Direct, set.Tools)
	}
	d := set.Direct[0]
	if d.Name != "Hyb" || d.Type != "hybridservice" || !d.Answers() || !d.APIRoutes {
		t.Errorf("descriptor %+v", d)
	}
	if d.Dir != folder || d.Script != filepath.Join(folder, "src", "index.js") || d.Path != filepath.Join(folder, manifestFile) {
		t.Errorf("paths dir=%s script=%s path=%s", d.Dir, d.Script, d.Path)
	}
	var cfg map[string]any
	if err := json.Unmarshal(d.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"PORTS": 80.0, "ON": true, "NAME": "plug", "EXTRA": "kept", "DebugMode": true,
		"PROJECT_BASE_PATH": filepath.Dir(root)}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config\n got %v\nwant %v", cfg, want)
	}
	env := envMap(d.Env)
	if env["PORTS"] != "80" || env["GLOBAL_ONLY"] != "g" || env["PROJECT_BASE_PATH"] != filepath.Dir(root) || env["DebugMode"] != "true" {
		t.Errorf("env %v", env)
	}
	if _, ok := env["BAD"]; ok {
		t.Error("a non-number integer key must be left out of the environment")
	}
	if d.Spec.Name != "Hyb" || d.Spec.DisplayName != "Hybrid" || d.Spec.Timeout != 7*time.Second ||
		len(d.Spec.Commands) != 1 || d.Spec.Source != d.Path || !d.Spec.DistributedExposed {
		t.Errorf("spec %+v", d.Spec)
	}
	if !slices.ContainsFunc(set.Notices, func(e Entry) bool { return e.Name == "Hyb" }) {
		t.Errorf("the dropped BAD key should be a notice: %v", set.Notices)
	}
}

func TestDirectResultMapsLikeStdioAnswers(t *testing.T) {
	cases := []struct {
		raw, want, err string
	}{
		{`"hello"`, `{"content":[{"type":"text","text":"hello"}]}`, ""},
		{`{"status":"success","result":"done"}`, `{"content":[{"type":"text","text":"done"}]}`, ""},
		{`{"status":"success","result":{"a":1}}`, `{"a":1}`, ""},
		{`{"status":"error","error":"nope"}`, "", "nope"},
		// Other fields travel with the object, as the official node sends it.
		{`{"status":"success","result":"saved","outputPath":"/tmp/a.png","fileName":"a.png"}`,
			`{"status":"success","result":"saved","outputPath":"/tmp/a.png","fileName":"a.png"}`, ""},
		{`{"status":"success","result":{"a":1},"fileName":"a.png"}`, `{"status":"success","result":{"a":1},"fileName":"a.png"}`, ""},
		{`{"status":"failed","error":"no disk","outputPath":"/x"}`, "", "no disk"},
		{`{"content":[{"type":"text","text":"x"}]}`, `{"content":[{"type":"text","text":"x"}]}`, ""},
		{`42`, `{"content":[{"type":"text","text":"42"}]}`, ""},
		{`[1,2]`, `{"content":[{"type":"text","text":"[1,2]"}]}`, ""},
		{``, `null`, ""},
		{`null`, `null`, ""},
	}
	for _, c := range cases {
		v, err := DirectResult("P", json.RawMessage(c.raw))
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.raw, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.raw, err)
			continue
		}
		if got := asJSON(t, v); got != c.want {
			t.Errorf("%s: got %s, want %s", c.raw, got, c.want)
		}
	}
}
