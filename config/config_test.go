package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestDefaultConfigIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	if err := (Config{}).Validate(); err == nil {
		t.Fatal("the zero Config validated; the defaults must matter")
	}
}

func TestParseConfigDecodesOverDefaults(t *testing.T) {
	doc := `
[hub]
url = "https://vcp.example.org"
ping_interval = "45s"
[node]
exposed_tools = ["VideoGen"]
[tools.VideoGen]
expose = false
timeout = "5m"
`
	got, err := Parse([]byte(doc), "test.toml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := Default()
	want.Hub.URL = "https://vcp.example.org"
	want.Hub.PingInterval = Duration(45 * time.Second)
	want.Node.ExposedTools = []string{"VideoGen"}
	no := false
	want.Tools = map[string]ToolConfig{"VideoGen": {Expose: &no, Timeout: Duration(5 * time.Minute)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded config:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseConfigEmptyDocumentGivesDefaults(t *testing.T) {
	got, err := Parse(nil, "empty.toml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !reflect.DeepEqual(got, Default()) {
		t.Errorf("got %+v, want the defaults", got)
	}
}

// problemsOf parses doc and returns its problems, failing if it parsed.
func problemsOf(t *testing.T, doc string) []Problem {
	t.Helper()
	_, err := Parse([]byte(doc), "c.toml")
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Parse(%q) error = %v, want a *Error", doc, err)
	}
	if ce.File != "c.toml" {
		t.Errorf("Error.File = %q, want c.toml", ce.File)
	}
	return ce.Problems
}

func TestParseConfigReportsEveryProblemWithPositions(t *testing.T) {
	doc := `key_file = "/etc/vcpnode/key"
[hub]
url = "ftp://host"
kye = "x"
ping_interval = "0s"
[node]
queue = -1
exposed_tools = ["a", ""]
[files]
roots = ["relative/dir"]
[log]
level = "verbose"
[tools.Foo]
timout = "1s"
[tools.Bar]
timeout = "100ms"
[loging]
level = "x"
`
	want := []Problem{
		{1, 1, "key_file", "unknown key (did you mean [hub] key_file? put it under that table's header)"},
		{3, 1, "hub.url", `scheme "ftp" is not supported`},
		{4, 1, "hub.kye", `unknown key (did you mean "key"?)`},
		{5, 1, "hub.ping_interval", "must be positive"},
		{7, 1, "node.queue", "must be 0 or more"},
		{8, 23, "node.exposed_tools[1]", "tool name is empty"},
		{10, 10, "files.roots[0]", `"relative/dir" is not an absolute path`},
		{12, 1, "log.level", `"verbose" is not one of debug, info, warn, error`},
		{14, 1, "tools.Foo.timout", `unknown key (did you mean "timeout"?)`},
		{16, 1, "tools.Bar.timeout", "must be between 1s and"},
		{17, 2, "loging", `unknown key (did you mean "log"?)`},
	}
	got := problemsOf(t, doc)
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), (&Error{Problems: got}).Error())
	}
	for i, w := range want {
		g := got[i]
		if g.Line != w.Line || g.Column != w.Column || g.Key != w.Key || !strings.Contains(g.Message, w.Message) {
			t.Errorf("problem %d = %+v, want %+v (message containing)", i, g, w)
		}
	}
}

func TestParseConfigDecodeErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string // formatted problem, after "c.toml:"
	}{
		{"syntax", "[hub\nurl = 1\n", "1:5: expected ']' to close table name"},
		{"int as string", "[node]\nmax_concurrent = \"8\"\n", "2:18: node.max_concurrent: wrong type: expected an integer, got a TOML string"},
		{"duration as int", "[hub]\nping_interval = 20\n", `2:17: hub.ping_interval: wrong type: expected a duration string like "30s", got a TOML integer`},
		{"bad duration", "[hub]\npong_timeout = \"15 seconds\"\n", `2:16: hub.pong_timeout: invalid duration "15 seconds"`},
		{"bool as string", "[tools.X]\nexpose = \"yes\"\n", "2:10: tools.X.expose: wrong type: expected true or false, got a TOML string"},
		{"list as string", "[node]\nhidden_tools = \"X\"\n", "2:16: node.hidden_tools: wrong type: expected an array of strings, got a TOML string"},
		{"duplicate key", "[log]\nlevel = \"info\"\nlevel = \"debug\"\n", "3:1: level: key level is already defined"},
		{"tools not a table", "tools = 3\n", "1:9: tools: wrong type: expected a table, got a TOML integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemsOf(t, tt.doc)
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1: %v", len(got), got)
			}
			if s := got[0].format("c.toml"); !strings.HasPrefix(s, "c.toml:"+tt.want) {
				t.Errorf("problem = %q, want prefix %q", s, "c.toml:"+tt.want)
			}
		})
	}
}

func TestConfigErrorFormat(t *testing.T) {
	e := &Error{File: "/etc/vcpnode.toml", Problems: []Problem{
		{Line: 3, Column: 7, Key: "hub.url", Message: "is empty"},
		{Key: "files.max_bytes", Message: "too big"},
		{Line: 9, Column: 1, Message: "syntax"},
	}}
	want := "/etc/vcpnode.toml:3:7: hub.url: is empty\n/etc/vcpnode.toml: files.max_bytes: too big\n/etc/vcpnode.toml:9:1: syntax"
	if got := e.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	if got := (&Error{Problems: e.Problems[:1]}).Error(); got != "3:7: hub.url: is empty" {
		t.Errorf("without a file: %q", got)
	}
}

func TestValidateFindsEachProblem(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		key    string
		msg    string
	}{
		{"empty url", func(c *Config) { c.Hub.URL = "" }, "hub.url", "is empty"},
		{"url scheme", func(c *Config) { c.Hub.URL = "tcp://h:1" }, "hub.url", "not supported"},
		{"url query", func(c *Config) { c.Hub.URL = "ws://h:1/?a=b" }, "hub.url", "has a query"},
		{"key both", func(c *Config) { c.Hub.Key, c.Hub.KeyFile = "k", "/etc/k" }, "hub.key_file", "not both"},
		{"key file relative", func(c *Config) { c.Hub.KeyFile = "key.txt" }, "hub.key_file", "not an absolute path"},
		{"bad key", func(c *Config) { c.Hub.Key = "has space" }, "hub.key", "whitespace"},
		{"name control", func(c *Config) { c.Hub.Name = "a\nb" }, "hub.name", "control character"},
		{"name long", func(c *Config) { c.Hub.Name = strings.Repeat("n", 129) }, "hub.name", "limit is 128"},
		{"pong zero", func(c *Config) { c.Hub.PongTimeout = 0 }, "hub.pong_timeout", "must be positive"},
		{"handshake negative", func(c *Config) { c.Hub.HandshakeTimeout = -1 }, "hub.handshake_timeout", "must be positive"},
		{"public ip junk", func(c *Config) { c.Hub.PublicIP = "example.org" }, "hub.public_ip", "not an IP address"},
		{"public ip loopback", func(c *Config) { c.Hub.PublicIP = "127.0.0.1" }, "hub.public_ip", "loopback"},
		{"max concurrent", func(c *Config) { c.Node.MaxConcurrent = 0 }, "node.max_concurrent", "at least 1"},
		{"result small", func(c *Config) { c.Node.MaxResultBytes = 1023 }, "node.max_result_bytes", "between 1024"},
		{"result big", func(c *Config) { c.Node.MaxResultBytes = 100*MiB + 1 }, "node.max_result_bytes", "between 1024"},
		{"grace negative", func(c *Config) { c.Node.ShutdownGrace = -1 }, "node.shutdown_grace", "negative"},
		{"memory limit too small", func(c *Config) { c.Node.MemoryLimit = 1 << 20 }, "node.memory_limit", "16 MiB"},
		{"hidden empty", func(c *Config) { c.Node.HiddenTools = []string{"x", ""} }, "node.hidden_tools[1]", "is empty"},
		{"tool spaces", func(c *Config) { c.Node.ExposedTools = []string{" X"} }, "node.exposed_tools[0]", "leading or trailing"},
		{"exposed and hidden", func(c *Config) { c.Node.ExposedTools, c.Node.HiddenTools = []string{"A", "B"}, []string{"B"} },
			"node.hidden_tools[0]", `"B" is also in node.exposed_tools`},
		{"max bytes zero", func(c *Config) { c.Files.MaxBytes = 0 }, "files.max_bytes", "must be positive"},
		{"write cap zero", func(c *Config) { c.Files.WriteMaxBytes = 0 }, "files.write_max_bytes", "must be from 1 to 104857600"},
		{"write cap over a frame", func(c *Config) { c.Files.WriteMaxBytes = ServerFrameLimit + 1 }, "files.write_max_bytes", "the server's frame limit"},
		{"root empty", func(c *Config) { c.Files.Roots = []string{""} }, "files.roots[0]", "is empty"},
		{"log format", func(c *Config) { c.Log.Format = "text" }, "log.format", `"text" is not one of auto, console, json`},
		{"tool name empty", func(c *Config) { c.Tools = map[string]ToolConfig{"": {}} }, `tools.""`, "tool name is empty"},
		{"tool timeout short", func(c *Config) { c.Tools = map[string]ToolConfig{"T": {Timeout: Duration(999 * time.Millisecond)}} },
			"tools.T.timeout", "between 1s"},
		{"tool timeout long", func(c *Config) {
			c.Tools = map[string]ToolConfig{"T": {Timeout: Duration(maxToolTimeout + time.Millisecond)}}
		},
			"tools.T.timeout", "2147483647 ms"},
		{"tool concurrency", func(c *Config) { c.Tools = map[string]ToolConfig{"a.b": {MaxConcurrent: -1}} },
			`tools."a.b".max_concurrent`, "must be 0"},
		{"tool memory", func(c *Config) { c.Tools = map[string]ToolConfig{"T": {MaxMemory: 8}} }, "tools.T.max_memory", "between 16 and"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mutate(&c)
			err := c.Validate()
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Validate() = %v, want a *Error", err)
			}
			if len(ce.Problems) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(ce.Problems), err)
			}
			p := ce.Problems[0]
			if p.Key != tt.key || !strings.Contains(p.Message, tt.msg) {
				t.Errorf("problem = %s, want key %s and message containing %q", p, tt.key, tt.msg)
			}
		})
	}
}

func TestValidateAcceptsEdgeValues(t *testing.T) {
	yes := true
	c := Default()
	c.Hub.URL = "https://[::1]:8443/"
	c.Hub.Name = strings.Repeat("n", 128)
	c.Hub.PublicIP = "2001:db8::7"
	c.Node.Queue = 0
	c.Node.MaxResultBytes = 100 * MiB
	c.Node.ShutdownGrace = 0
	c.Files.Roots = []string{"/srv/files"}
	c.Tools = map[string]ToolConfig{
		"Min": {Timeout: Duration(time.Second)},
		"Max": {Timeout: Duration(maxToolTimeout), Expose: &yes, MaxConcurrent: 2},
		"Off": {},
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
}

func TestValidateReportsEverythingAtOnce(t *testing.T) {
	c := Config{Tools: map[string]ToolConfig{"": {Timeout: -1}}}
	err := c.Validate()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Validate() = %v", err)
	}
	keys := map[string]bool{}
	for _, p := range ce.Problems {
		keys[p.Key] = true
	}
	for _, k := range []string{"hub.url", "hub.ping_interval", "hub.pong_timeout", "hub.handshake_timeout",
		"node.max_concurrent", "node.max_result_bytes", "files.max_bytes", "log.level", "log.format", `tools.""`, `tools."".timeout`} {
		if !keys[k] {
			t.Errorf("no problem reported for %s in:\n%v", k, err)
		}
	}
	if lines := strings.Count(err.Error(), "\n") + 1; lines != len(ce.Problems) {
		t.Errorf("Error() has %d lines for %d problems", lines, len(ce.Problems))
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vcpnode.toml")
	if err := os.WriteFile(path, []byte("[node]\nqueue = -5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if want := path + ":2:1: node.queue: must be 0 or more (got -5)"; err == nil || err.Error() != want {
		t.Errorf("Load = %v, want %q", err, want)
	}
	_, err = Load(filepath.Join(dir, "missing.toml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}

// commentedSetting is a commented-out setting of the example ("# key = …");
// "##" lines are prose, and "##   " lines are samples to copy.
var commentedSetting = regexp.MustCompile(`(?m)^# ([a-z_]+ = )`)

// The example uncomments cleanly: every table header is live, so removing
// "# " from any setting leaves it in its table (a user who uncomments only
// url and key_file gets a working [hub]).
func TestExampleConfig(t *testing.T) {
	path := filepath.Join("..", "config.example.toml")
	got, err := Load(path)
	if err != nil {
		t.Fatalf("Load(example): %v", err)
	}
	if !reflect.DeepEqual(got, Default()) {
		t.Errorf("the example as shipped (all commented out) = %+v, want the defaults", got)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n# ["); n > 0 {
		t.Errorf("%d table headers are commented out", n)
	}
	live := commentedSetting.ReplaceAll(data, []byte("$1"))
	if n := strings.Count(string(live), "\n# "); n > 0 {
		t.Errorf("%d commented lines are neither settings nor ## prose", n)
	}
	cfg, err := Parse(live, "example, uncommented")
	if err != nil {
		t.Fatalf("the uncommented example does not load:\n%v", err)
	}
	def := Default()
	def.Node.ExposedTools, def.Node.HiddenTools, def.Files.Roots = []string{}, []string{}, []string{}
	def.Plugins.Dirs, def.Plugins.PassEnv = []string{}, []string{}
	if !reflect.DeepEqual(cfg, def) {
		t.Errorf("the example's values are not the defaults:\n got %+v\nwant %+v", cfg, def)
	}

	// Uncommenting just url and key_file, as the docs say, sets them.
	one := strings.Replace(string(data), "# url = \"ws://127.0.0.1:6005\"", "url = \"wss://vcp.example.org\"", 1)
	one = strings.Replace(one, "# key_file = \"\"", "key_file = \"/etc/vcpnode/key\"", 1)
	if cfg, err := Parse([]byte(one), "example, url and key_file"); err != nil || cfg.Hub.URL != "wss://vcp.example.org" || cfg.Hub.KeyFile != "/etc/vcpnode/key" {
		t.Errorf("uncommenting url and key_file: %+v, %v", cfg.Hub, err)
	}

	// The [tools.NAME] and [sandbox.profiles.NAME] samples (## prose, since
	// the tables need a real name) load.
	var sample []string
	in := false
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "##   [tools.") || strings.HasPrefix(line, "##   [sandbox.profiles.") {
			in = true
		} else if in && strings.HasPrefix(line, "##   [") || !strings.HasPrefix(line, "##") {
			in = false
		}
		if s, ok := strings.CutPrefix(line, "##   "); ok && in {
			sample = append(sample, s)
		}
	}
	tools, err := Parse([]byte(strings.Join(sample, "")), "tools sample")
	tool, ok := tools.Tools["UnitConverter"]
	if err != nil || !ok || tool.Expose == nil || !*tool.Expose || tool.Approval != "ask" || tool.ApprovalTimeout.D() != 2*time.Minute ||
		tool.Sandbox != "offline" {
		t.Errorf("the [tools.NAME] sample = %+v, %v (lines %q)", tool, err, sample)
	}
	if web, ok := tools.Sandbox.Profiles["web"]; !ok || web.Extends != "default" || len(web.Read) != 2 || web.Memory != "512MiB" {
		t.Errorf("the [sandbox.profiles.NAME] sample = %+v (lines %q)", tools.Sandbox.Profiles, sample)
	}
	live = append(live, []byte("\n"+strings.Join(sample, ""))...)
	// Every key the Config knows is documented.
	for _, key := range []string{"url", "key", "key_file", "name", "ping_interval", "pong_timeout", "handshake_timeout", "public_ip",
		"max_concurrent", "queue", "max_result_bytes", "shutdown_grace", "memory_limit", "exposed_tools", "hidden_tools",
		"roots", "max_bytes", "level", "format", "expose", "timeout",
		"dirs", "pass_env", "env_file", "async_max_runtime", "max_output_bytes", "state_dir", "watch", "node", "max_memory",
		"approval", "approval_timeout", "socket", "group", "file", "listen", "allow_remote", "tools", "token_file", "idle_timeout",
		"warm", "warm_pool", "preload", "profile", "require", "sandbox"} {
		if !strings.Contains(string(live), "\n"+key+" = ") {
			t.Errorf("the example does not show %s", key)
		}
	}
}

func TestDurationText(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("1m30s")); err != nil || d.D() != 90*time.Second {
		t.Fatalf("UnmarshalText(1m30s) = %v, %v", d, err)
	}
	if b, _ := d.MarshalText(); string(b) != "1m30s" {
		t.Errorf("MarshalText = %q", b)
	}
	if err := d.UnmarshalText([]byte("30")); err == nil || !strings.Contains(err.Error(), `like "30s"`) {
		t.Errorf("UnmarshalText(30) = %v, want a hint", err)
	}
}

// One run reports every wrong type and bad duration, with positions, next
// to the unknown keys and invalid values of the rest of the document.
func TestParseReportsEveryTypeErrorAtOnce(t *testing.T) {
	doc := `[hub]
ping_interval = 20
pong_timeout = "15 seconds"
handshake_timeout = "1m"
[node]
max_concurrent = "8"
queue = -1
hidden_tools = "X"
bogus = 1
[[placeholders.command]]
name = "A"
command = "true"
every = 5
[tools.X]
expose = "yes"
`
	want := []Problem{
		{2, 17, "hub.ping_interval", "wrong type: expected a duration string"},
		{3, 16, "hub.pong_timeout", `invalid duration "15 seconds"`},
		{6, 18, "node.max_concurrent", "wrong type: expected an integer, got a TOML string"},
		{7, 1, "node.queue", "must be 0 or more"},
		{8, 16, "node.hidden_tools", "wrong type: expected an array of strings"},
		{9, 1, "node.bogus", "unknown key"},
		{13, 9, "placeholders.command.every", "wrong type: expected a duration string"},
		{15, 10, "tools.X.expose", "wrong type: expected true or false"},
	}
	got := problemsOf(t, doc)
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), (&Error{Problems: got}).Error())
	}
	for i, w := range want {
		g := got[i]
		if g.Line != w.Line || g.Key != w.Key || !strings.Contains(g.Message, w.Message) {
			t.Errorf("problem %d = %+v, want %+v (message containing)", i, g, w)
		}
	}
}
