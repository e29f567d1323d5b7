package plugin

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

func TestJSParseIntAndBool(t *testing.T) {
	ints := []struct {
		in   string
		want string
		ok   bool
	}{
		{"30", "30", true}, {"30s", "30", true}, {" \t42", "42", true}, {"-7x", "-7", true}, {"+5", "5", true},
		{"007", "7", true}, {"-0", "0", true}, {"000", "0", true}, {"1e3", "1", true}, {"0x10", "0", true},
		{"abc", "", false}, {"", "", false}, {"-", "", false}, {" ", "", false},
	}
	for _, c := range ints {
		if got, ok := jsParseInt(c.in); got != c.want || ok != c.ok {
			t.Errorf("jsParseInt(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	bools := map[string]string{"true": "true", "True": "true", "TRUE": "true", "1": "false", "yes": "false", "": "false", " true": "false"}
	for in, want := range bools {
		if got := jsBool(in); got != want {
			t.Errorf("jsBool(%q) = %q, want %q", in, got, want)
		}
	}
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestPluginEnvLayersAndComputedValues(t *testing.T) {
	src := envSources{
		base:   map[string]string{"PATH": "/bin", "HOME": "/home/u", "DebugMode": "true", "FROM_BASE": "b"},
		global: map[string]string{"SHARED": "global", "CALLBACK_BASE_URL": "http://global/cb", "G_INT": "12abc"},
	}
	conf := map[string]string{"SHARED": "plugin", "EMPTY_INT": "", "CALLBACK_BASE_URL": "http://plugin/cb"}
	m := &manifest{name: "Task", pluginType: typeAsynchronous, schema: []schemaKey{
		{key: "G_INT", typ: "integer"},
		{key: "EMPTY_INT", typ: "Integer", def: "5", hasDefault: true}, // set but empty: no default, and NaN drops it
		{key: "FROM_BASE", typ: "boolean"},
		{key: "ONLY_DEFAULT", typ: "boolean", def: "True", hasDefault: true},
		{key: "NO_VALUE", typ: "string"},
	}}
	cases := []struct {
		name        string
		callbackURL string
		want        map[string]string
	}{
		{"node callback URL wins", "http://127.0.0.1:5/t/cb", map[string]string{
			"PATH": "/bin", "HOME": "/home/u", "FROM_BASE": "false", "SHARED": "plugin", "G_INT": "12",
			"ONLY_DEFAULT": "true", "DebugMode": "true", "PROJECT_BASE_PATH": "/srv/vcp", "PYTHONIOENCODING": "utf-8",
			"CALLBACK_BASE_URL": "http://127.0.0.1:5/t/cb", "PLUGIN_NAME_FOR_CALLBACK": "Task",
		}},
		{"without a listener the files' URL stays", "", map[string]string{
			"PATH": "/bin", "HOME": "/home/u", "FROM_BASE": "false", "SHARED": "plugin", "G_INT": "12",
			"ONLY_DEFAULT": "true", "DebugMode": "true", "PROJECT_BASE_PATH": "/srv/vcp", "PYTHONIOENCODING": "utf-8",
			"CALLBACK_BASE_URL": "http://plugin/cb", "PLUGIN_NAME_FOR_CALLBACK": "Task",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, _, notices := pluginEnv(src, m, conf, "/srv/vcp", c.callbackURL)
			if !slices.IsSorted(env) {
				t.Error("env is not sorted")
			}
			if got := envMap(env); !maps.Equal(got, c.want) {
				t.Errorf("env\n got %q\nwant %q", got, c.want)
			}
			if len(notices) != 1 || !strings.Contains(notices[0], "EMPTY_INT") {
				t.Errorf("notices %q, want one about EMPTY_INT", notices)
			}
		})
	}
}

func TestPluginEnvSyncHasNoCallbackAndDebugDefaultsFalse(t *testing.T) {
	m := &manifest{name: "S", pluginType: typeSynchronous}
	env, _, _ := pluginEnv(envSources{base: map[string]string{}}, m, map[string]string{"DebugMode": "False"}, "/p", "http://x")
	want := map[string]string{"DebugMode": "false", "PROJECT_BASE_PATH": "/p", "PYTHONIOENCODING": "utf-8"}
	if got := envMap(env); !maps.Equal(got, want) {
		t.Fatalf("env %q, want %q", got, want)
	}
}

func TestBaseEnvPicksOnlyTheBaseSetAndPassEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "LC_TIME=x", "LANG=en", "TZ=UTC", "TMPDIR=/t", "USER=u",
		"LOGNAME=u", "SHELL=/bin/sh", "VCP_KEY=secret", "AWS_SECRET=x", "PASSED=1", "NOEQUALS", "=weird"}
	got := baseEnv(environ, []string{"PASSED", "ABSENT"})
	want := map[string]string{"PATH": "/bin", "HOME": "/h", "LC_ALL": "C", "LC_TIME": "x", "LANG": "en", "TZ": "UTC",
		"TMPDIR": "/t", "USER": "u", "LOGNAME": "u", "SHELL": "/bin/sh", "PASSED": "1"}
	if !maps.Equal(got, want) {
		t.Fatalf("base env %q, want %q", got, want)
	}
}

// TestChildSeesExactlyTheExpectedEnvironment runs `env -0` as a plugin
// (spawned directly, so no shell adds PWD) and compares every variable.
func TestChildSeesExactlyTheExpectedEnvironment(t *testing.T) {
	t.Setenv("VCPNODE_TEST_SECRET", "must-not-leak")
	t.Setenv("VCPNODE_TEST_PASSED", "passed-value")
	root := pluginRoot(t, "EnvDump")
	writeFile(t, filepath.Join(root, "EnvDump"), configEnvFile, strings.Join([]string{
		"SHARED=plugin",
		"INT_KEY=30s",
		"NAN_KEY=abc",
		"BOOL_KEY=TRUE",
		"SET_KEY=",
		`PLUGIN_ONLY="multi\nline"`,
		"WEIRD@KEY#1=x",
		"",
	}, "\n"))
	global := writeFile(t, t.TempDir(), "global.env", "GLOBAL_ONLY=g\nSHARED=global\nINT_KEY=7\nDebugMode=True\nBOOL_KEY=no\n")
	h := newHost(t, Options{PassEnv: []string{"VCPNODE_TEST_PASSED"}, EnvFile: global})
	set := scan(t, h, root)
	tool := findTool(t, set, "EnvDump")
	if tool.(*pluginTool).run.launch.shell {
		t.Fatal("`env -0` should be spawned directly")
	}
	res, err := call(context.Background(), tool, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]string)
	for _, kv := range strings.Split(strings.TrimRight(textOf(t, res), "\x00"), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}

	want := map[string]string{
		"VCPNODE_TEST_PASSED": "passed-value",
		"GLOBAL_ONLY":         "g",
		"SHARED":              "plugin",
		"INT_KEY":             "30",
		"BOOL_KEY":            "true",
		"SET_KEY":             "",
		"PLUGIN_ONLY":         "multi\nline",
		"WEIRD@KEY#1":         "x",
		"DEF_KEY":             "from-schema",
		"DEF_INT":             "42",
		"DebugMode":           "true",
		"PROJECT_BASE_PATH":   filepath.Dir(root),
		"PYTHONIOENCODING":    "utf-8",
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if slices.Contains(baseEnvKeys, k) || strings.HasPrefix(k, "LC_") {
			want[k] = v
		}
	}
	// The process-tree marker (one value per run) is checked for shape only.
	if m := got[proctree.EnvMarker]; m == "" || strings.ContainsAny(m, "=\x00 ") {
		t.Errorf("%s = %q, want a run id", proctree.EnvMarker, m)
	}
	want[proctree.EnvMarker] = got[proctree.EnvMarker]
	if !maps.Equal(got, want) {
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected variable %s", k)
			}
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s = %q (present %v), want %q", k, g, ok, v)
			}
		}
	}
	if _, leaked := got["VCPNODE_TEST_SECRET"]; leaked {
		t.Error("a daemon variable outside the base set and pass_env reached the plugin")
	}
}
