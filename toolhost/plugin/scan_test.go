package plugin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/toolhost"
)

const syncEntry = `"pluginType":"synchronous","entryPoint":{"command":"sh run.sh"}`

// TestScanSortsPluginsIntoTheRightLists writes one folder per case and checks
// where Scan puts it and that the reason names the file and the field.
func TestScanSortsPluginsIntoTheRightLists(t *testing.T) {
	cases := []struct {
		folder   string
		file     string // manifest file name; default plugin-manifest.json
		manifest string
		want     string // tool, static, disabled, unsupported, invalid, duplicate, none
		name     string // the Entry's or tool's name, when one is expected
		reason   []string
	}{
		{folder: "Alpha", manifest: `{"name":"Alpha",` + syncEntry + `}`, want: "tool", name: "Alpha"},
		{folder: "Async", manifest: `{"name":"Async","pluginType":"asynchronous","entryPoint":{"command":"python3 a.py"},"communication":{"protocol":"stdio"}}`, want: "tool", name: "Async"},
		{folder: "Static", manifest: `{"name":"St","pluginType":"static","entryPoint":{"command":"sh s.sh"},"communication":{"protocol":"process_stdio"}}`, want: "static", name: "St"},
		{folder: "StaticNoComm", manifest: `{"name":"St2","pluginType":"static","entryPoint":{"command":"sh s.sh"}}`, want: "static", name: "St2"},
		{folder: "Blocked", file: manifestFile + blockedSuffix, manifest: `{"name":"Blocked",` + syncEntry + `}`, want: "disabled", name: "Blocked"},
		{folder: "BlockedBroken", file: manifestFile + blockedSuffix, manifest: `{`, want: "disabled", name: "BlockedBroken"},
		{folder: "Service", manifest: `{"name":"Svc","pluginType":"service","entryPoint":{"script":"x.js"},"communication":{"protocol":"direct"}}`, want: "direct", name: "Svc"},
		{folder: "Hybrid", manifest: `{"name":"Hyb","pluginType":"hybridservice","entryPoint":{"script":"lib/x.js"},"communication":{"protocol":"direct"}}`, want: "direct", name: "Hyb"},
		{folder: "HybridNoProto", manifest: `{"name":"HybNP","pluginType":"hybridservice","entryPoint":{"script":"x.js"}}`, want: "unsupported", name: "HybNP", reason: []string{"hybridservice", `protocol "direct"`, "has none"}},
		{folder: "HybridStdio", manifest: `{"name":"HybS","pluginType":"hybridservice","entryPoint":{"script":"x.js"},"communication":{"protocol":"stdio"}}`, want: "unsupported", name: "HybS", reason: []string{`has "stdio"`}},
		{folder: "HybridNoScript", manifest: `{"name":"HybNS","pluginType":"hybridservice","entryPoint":{"command":"node x.js"},"communication":{"protocol":"direct"}}`, want: "invalid", reason: []string{"entryPoint.script: missing"}},
		{folder: "HybridEscape", manifest: `{"name":"HybE","pluginType":"hybridservice","entryPoint":{"script":"../../Plugin.js"},"communication":{"protocol":"direct"}}`, want: "invalid", reason: []string{"entryPoint.script", "inside the plugin folder"}},
		{folder: "Prep", manifest: `{"name":"Prep","pluginType":"messagePreprocessor","entryPoint":{"script":"x.js"}}`, want: "unsupported", name: "Prep", reason: []string{"messagePreprocessor"}},
		{folder: "BadJSON", manifest: "{\n  \"name\": \"X\",,\n}", want: "invalid", reason: []string{"BadJSON/plugin-manifest.json", "not a JSON object", "line 2"}},
		{folder: "Array", manifest: `[1]`, want: "invalid", reason: []string{"want an object"}},
		{folder: "NoName", manifest: `{` + syncEntry + `}`, want: "invalid", reason: []string{"NoName/plugin-manifest.json", "name: missing"}},
		{folder: "NumName", manifest: `{"name":7,` + syncEntry + `}`, want: "invalid", reason: []string{"name: must be a string"}},
		{folder: "SpaceName", manifest: `{"name":" Padded",` + syncEntry + `}`, want: "invalid", reason: []string{"name:", "surrounding blanks"}},
		{folder: "NoType", manifest: `{"name":"NoType","entryPoint":{"command":"x"}}`, want: "invalid", reason: []string{"pluginType: missing"}},
		{folder: "OddType", manifest: `{"name":"Odd","pluginType":"daemon","entryPoint":{"command":"x"}}`, want: "invalid", reason: []string{"pluginType", `"daemon"`}},
		{folder: "NoEntry", manifest: `{"name":"NoEntry","pluginType":"synchronous"}`, want: "invalid", reason: []string{"entryPoint: missing"}},
		{folder: "NoCommand", manifest: `{"name":"NoCmd","pluginType":"static","entryPoint":{"type":"nodejs"}}`, want: "invalid", reason: []string{"NoCommand/plugin-manifest.json", "entryPoint.command: missing"}},
		{folder: "NumCommand", manifest: `{"name":"NumCmd","pluginType":"synchronous","entryPoint":{"command":5}}`, want: "invalid", reason: []string{"entryPoint.command: must be a string"}},
		{folder: "DirectSync", manifest: `{"name":"DS",` + syncEntry + `,"communication":{"protocol":"direct"}}`, want: "invalid", reason: []string{"communication.protocol", `must use "stdio"`}},
		{folder: "StrTimeout", manifest: `{"name":"ST",` + syncEntry + `,"communication":{"protocol":"stdio","timeout":"30000"}}`, want: "invalid", reason: []string{"communication.timeout: must be a number of milliseconds"}},
		{folder: "NegTimeout", manifest: `{"name":"NT","pluginType":"synchronous","entryPoint":{"command":"x","timeout":-5}}`, want: "invalid", reason: []string{"entryPoint.timeout: must not be negative"}},
		{folder: "HugeTimeout", manifest: `{"name":"HT",` + syncEntry + `,"communication":{"timeout":1e12}}`, want: "invalid", reason: []string{"communication.timeout", "longer than"}},
		{folder: "BadExposed", manifest: `{"name":"BE",` + syncEntry + `,"distributedExposed":"false"}`, want: "invalid", reason: []string{"distributedExposed: must be true or false"}},
		{folder: "Hidden", manifest: `{"name":"Hidden",` + syncEntry + `,"distributedExposed":false}`, want: "tool", name: "Hidden"},
		{folder: "ZDupAlpha", manifest: `{"name":"Alpha",` + syncEntry + `}`, want: "duplicate", name: "Alpha", reason: []string{"ZDupAlpha/plugin-manifest.json", "Alpha/plugin-manifest.json, which is used"}},
		{folder: "ZDupStatic", manifest: `{"name":"St",` + syncEntry + `}`, want: "duplicate", name: "St"},
		{folder: "Empty", want: "none"},
		{folder: ".hidden", manifest: `{"name":"DotFolder",` + syncEntry + `}`, want: "none"},
	}
	root := pluginRoot(t)
	for _, c := range cases {
		dir := filepath.Join(root, c.folder)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if c.manifest != "" {
			file := c.file
			if file == "" {
				file = manifestFile
			}
			writeFile(t, dir, file, c.manifest)
		}
	}
	writeFile(t, root, "stray-file.json", `{"name":"NotAFolder"}`)
	set := scan(t, newHost(t, Options{}), root)

	lists := map[string][]Entry{
		"disabled": set.Disabled, "unsupported": set.Unsupported, "invalid": set.Invalid, "duplicate": set.Duplicates,
	}
	for _, tool := range set.Tools {
		lists["tool"] = append(lists["tool"], Entry{Name: tool.Spec().Name, Path: tool.Spec().Source})
	}
	for _, d := range set.Direct {
		lists["direct"] = append(lists["direct"], Entry{Name: d.Name, Path: d.Path})
	}
	for _, s := range set.Static {
		lists["static"] = append(lists["static"], Entry{Name: s.Name, Path: s.Source})
	}
	for _, c := range cases {
		t.Run(c.folder, func(t *testing.T) {
			var found []string
			for kind, entries := range lists {
				for _, e := range entries {
					if filepath.Base(filepath.Dir(e.Path)) != c.folder {
						continue
					}
					found = append(found, kind)
					if kind != c.want {
						continue
					}
					if c.name != "" && e.Name != c.name {
						t.Errorf("name %q, want %q", e.Name, c.name)
					}
					for _, r := range c.reason {
						if !strings.Contains(e.Reason, r) {
							t.Errorf("reason %q does not mention %q", e.Reason, r)
						}
					}
				}
			}
			switch {
			case c.want == "none" && len(found) > 0:
				t.Errorf("listed as %v, want not listed", found)
			case c.want != "none" && (len(found) != 1 || found[0] != c.want):
				t.Errorf("listed as %v, want exactly [%s]", found, c.want)
			}
		})
	}
	if len(set.Warnings()) != len(set.Invalid)+len(set.Duplicates)+len(set.Unsupported)+len(set.Notices) {
		t.Errorf("Warnings has %d lines for %d problems", len(set.Warnings()),
			len(set.Invalid)+len(set.Duplicates)+len(set.Unsupported)+len(set.Notices))
	}
	if !set.IsAsync("Async") || set.IsAsync("Alpha") || set.IsAsync("St") {
		t.Error("IsAsync should hold for asynchronous plugins only")
	}
}

func TestScanFirstDirWinsDuplicates(t *testing.T) {
	first, second := pluginRoot(t), pluginRoot(t)
	writeFile(t, filepath.Join(second, "A"), manifestFile, `{"name":"Same",`+syncEntry+`}`)
	writeFile(t, filepath.Join(first, "Z"), manifestFile, `{"name":"Same",`+syncEntry+`}`)
	set := scan(t, newHost(t, Options{}), first, second)
	if len(set.Tools) != 1 || !strings.HasPrefix(set.Tools[0].Spec().Source, first) {
		t.Fatalf("the plugin of the first dir should win, got %v", set.Tools)
	}
	if len(set.Duplicates) != 1 || !strings.HasPrefix(set.Duplicates[0].Path, second) {
		t.Fatalf("duplicates %v", set.Duplicates)
	}
}

func TestScanEnabledManifestWinsOverBlock(t *testing.T) {
	root := pluginRoot(t)
	dir := filepath.Join(root, "Both")
	writeFile(t, dir, manifestFile, `{"name":"Both",`+syncEntry+`}`)
	writeFile(t, dir, manifestFile+blockedSuffix, `{"name":"Both",`+syncEntry+`}`)
	set := scan(t, newHost(t, Options{}), root)
	if len(set.Tools) != 1 || len(set.Disabled) != 0 {
		t.Fatalf("tools %d, disabled %v", len(set.Tools), set.Disabled)
	}
}

func TestScanSpecs(t *testing.T) {
	root := pluginRoot(t, "Echo", "AsyncTask")
	writeFile(t, filepath.Join(root, "Echo"), configEnvFile, "ECHO_SECRET=hunter2-in-config\n")
	writeFile(t, filepath.Join(root, "Both"), manifestFile,
		`{"name":"Both","pluginType":"synchronous","entryPoint":{"command":"x","timeout":300000},"communication":{"protocol":"stdio","timeout":1500}}`)
	writeFile(t, filepath.Join(root, "None"), manifestFile, `{"name":"None","version":2.1,`+syncEntry+`}`)
	writeFile(t, filepath.Join(root, "EntryOnly"), manifestFile,
		`{"name":"EntryOnly","pluginType":"synchronous","entryPoint":{"command":"x","timeout":300000}}`)
	set := scan(t, newHost(t, Options{}), root)

	echo := findTool(t, set, "Echo").Spec()
	want := toolhost.Spec{
		Name: "Echo", DisplayName: "Echo (test)", Version: "1.2.0", Description: "Answers with its arguments.",
		Commands: []toolhost.Command{{Command: "Echo", Description: "Repeats the arguments.",
			Example: "<<<[TOOL_REQUEST]>>>\ntool_name:「始」Echo「末」\n<<<[END_TOOL_REQUEST]>>>"}},
		Timeout: 5 * time.Second, Source: filepath.Join(root, "Echo", manifestFile), DistributedExposed: true,
	}
	if asJSON(t, echo) != asJSON(t, want) {
		t.Errorf("Echo spec\n got %s\nwant %s", asJSON(t, echo), asJSON(t, want))
	}
	async := findTool(t, set, "AsyncTask").Spec()
	if p := async.WebSocketPush; p == nil || !p.Enabled || p.MessageType != "async_done" || p.TargetClientType != "VCPLog" {
		t.Errorf("AsyncTask webSocketPush %+v", p)
	}
	if async.Commands[0].Command != "Start" || async.Timeout != 9*time.Second {
		t.Errorf("AsyncTask spec %+v", async)
	}
	for name, timeout := range map[string]time.Duration{"EntryOnly": 300 * time.Second, "Both": 1500 * time.Millisecond, "None": toolhost.DefaultTimeout} {
		if got := findTool(t, set, name).Spec().Timeout; got != timeout {
			t.Errorf("%s timeout %s, want %s", name, got, timeout)
		}
	}
	if v := findTool(t, set, "None").Spec().Version; v != "2.1" {
		t.Errorf("numeric version read as %q", v)
	}
	// Nothing of the folder, the command or the config reaches the wire.
	wire, err := toolhost.WireManifest(echo, echo.Timeout)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"hunter2", "echo.sh", root} {
		if strings.Contains(string(wire), leak) {
			t.Errorf("wire manifest %s leaks %q", wire, leak)
		}
	}
	for _, leak := range []string{"hunter2", "echo.sh"} {
		if strings.Contains(asJSON(t, echo), leak) {
			t.Errorf("spec %s leaks %q", asJSON(t, echo), leak)
		}
	}
}

func TestScanDropsBadInvocationCommands(t *testing.T) {
	root := pluginRoot(t)
	writeFile(t, filepath.Join(root, "Cmds"), manifestFile, `{"name":"Cmds",`+syncEntry+`,
	  "capabilities":{"invocationCommands":[
	    {"commandIdentifier":"Good","description":"ok","example":"e"},
	    {"command":"NumDesc","description":42},
	    {"command":"ObjExample","description":"d","example":{"x":1}},
	    "not an object",
	    {"command":"Both","commandIdentifier":"Ignored","description":"d"},
	    {"commandIdentifier":["bad"],"description":"d"}
	  ]},
	  "configSchema":[{"key":"A"}],
	  "requiresAdmin":true}`)
	set := scan(t, newHost(t, Options{}), root)
	spec := findTool(t, set, "Cmds").Spec()
	if len(spec.Commands) != 2 || spec.Commands[0].Command != "Good" || spec.Commands[1].Command != "Both" {
		t.Fatalf("commands %+v, want Good and Both", spec.Commands)
	}
	var notices []string
	for _, n := range set.Notices {
		notices = append(notices, n.Reason)
	}
	all := strings.Join(notices, "\n")
	for _, want := range []string{
		"invocationCommands[1]: description: must be a string",
		"invocationCommands[2]: example: must be a string",
		"invocationCommands[3]: not an object",
		"invocationCommands[5]: commandIdentifier: must be a string",
		"configSchema: not an object",
		"requiresAdmin: ignored",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("notices do not mention %q:\n%s", want, all)
		}
	}
	for _, n := range set.Notices {
		if !strings.Contains(n.Reason, filepath.Join(root, "Cmds", manifestFile)) {
			t.Errorf("notice %q does not name the manifest", n.Reason)
		}
	}
	if spec.DistributedExposed != true {
		t.Error("a plugin without distributedExposed is exposed")
	}
}

func TestScanHiddenPluginIsNotExposed(t *testing.T) {
	root := pluginRoot(t)
	writeFile(t, filepath.Join(root, "H"), manifestFile, `{"name":"H",`+syncEntry+`,"distributedExposed":false}`)
	if findTool(t, scan(t, newHost(t, Options{}), root), "H").Spec().DistributedExposed {
		t.Fatal(`"distributedExposed": false was not honoured`)
	}
}

func TestScanStaticPlugin(t *testing.T) {
	root := pluginRoot(t, "Static", "StaticSlow")
	set := scan(t, newHost(t, Options{}), root)
	if len(set.Static) != 2 || len(set.Tools) != 0 {
		t.Fatalf("static %d, tools %d", len(set.Static), len(set.Tools))
	}
	s := set.Static[0]
	if s.Name != "Static" || s.Cron != "*/10 * * * * *" || s.Timeout != 5*time.Second ||
		strings.Join(s.Placeholders, ",") != "{{StaticValue}},Bare" || s.DisplayName != "Static (test)" {
		t.Fatalf("static plugin %+v", s)
	}
	if slow := set.Static[1]; slow.Timeout != 2*time.Second || slow.Cron != "" {
		t.Fatalf("StaticSlow timeout %s cron %q", slow.Timeout, slow.Cron)
	}
}

func TestScanFailsOnUnreadableDirOrEnvFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := newHost(t, Options{}).Scan([]string{missing}); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing dir: %v", err)
	}
	h := newHost(t, Options{EnvFile: missing})
	if _, err := h.Scan([]string{pluginRoot(t)}); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "env_file") {
		t.Errorf("missing env file: %v", err)
	}
}

func FuzzParseManifest(f *testing.F) {
	for _, s := range []string{
		`{"name":"A",` + syncEntry + `}`,
		`{"name":"S","pluginType":"static","entryPoint":{"command":"x"},"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{A}}"}]}}`,
		`{"name":"A","pluginType":"asynchronous","entryPoint":{"command":"x"},"webSocketPush":{"enabled":true},"configSchema":{"K":{"type":"integer","default":3}}}`,
		`{`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseManifest("/p/plugin-manifest.json", data)
		if err == nil && (m == nil || m.name == "" || m.command == "") {
			t.Fatalf("accepted a manifest without a name or command: %q", data)
		}
	})
}

// TestScanWarnsAboutAnAsyncNameNoCallbackCanCarry: such a plugin still
// loads (its call works), but the owner is told its results cannot arrive.
func TestScanWarnsAboutAnAsyncNameNoCallbackCanCarry(t *testing.T) {
	root := pluginRoot(t)
	dir := filepath.Join(root, "Spaced")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name":"Video Gen","pluginType":"asynchronous","entryPoint":{"command":"python3 a.py"}}`
	if err := os.WriteFile(filepath.Join(dir, manifestFile), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := NewHost(Options{}).Scan([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Tools) != 1 {
		t.Fatalf("tools = %d, want the plugin loaded", len(set.Tools))
	}
	found := false
	for _, n := range set.Notices {
		found = found || (n.Name == "Video Gen" && strings.Contains(n.Reason, "callbacks will be refused"))
	}
	if !found {
		t.Errorf("no notice about the name; notices = %+v", set.Notices)
	}
}

// A plugin dir that is one plugin's folder (--plugins pointing one level
// too deep) hosts nothing: the scan says so and names the parent to list.
func TestScanWarnsOfAPluginFolderAsDir(t *testing.T) {
	root := pluginRoot(t, "Echo")
	folder := filepath.Join(root, "Echo")
	set := scan(t, newHost(t, Options{}), folder)
	want := fmt.Sprintf("plugin dir %s holds a plugin-manifest.json itself: it is one plugin's folder, and a plugin dir holds plugin folders; list its parent, %s, instead", folder, root)
	if w := set.Warnings(); !slices.Contains(w, want) {
		t.Errorf("warnings %q\nwant one: %s", w, want)
	}
	if w := scan(t, newHost(t, Options{}), root).Warnings(); len(w) != 0 {
		t.Errorf("the folder of plugins itself: warnings %q", w)
	}
}
