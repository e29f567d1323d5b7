package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/schema"
	"github.com/vcpnode/vcpnode/toolhost/textproto"
	"github.com/vcpnode/vcpnode/wsproto"
)

// thumbTool is a typed tool that answers with the arguments it received.
type thumbTool struct{}

func (thumbTool) Spec() toolhost.Spec {
	return toolhost.Spec{
		Name:        "Thumb",
		DisplayName: "Thumbnails",
		Version:     "1.0.0",
		Description: "Makes a thumbnail of an image on this machine.",
		Commands: []toolhost.Command{{Schema: &schema.Schema{Params: []schema.Param{
			{Name: "path", Type: schema.TypeString, Required: true, Description: "the image, relative to a file root"},
			{Name: "size", Type: schema.TypeInteger, Required: true, Description: "the longer side in pixels"},
			{Name: "crop", Type: schema.TypeBoolean, Default: json.RawMessage(`false`), Description: "crop to a square"},
			{Name: "format", Type: schema.TypeString, Enum: []json.RawMessage{[]byte(`"png"`), []byte(`"jpeg"`)}, Default: json.RawMessage(`"png"`)},
		}}}},
		Source:             "test",
		DistributedExposed: true,
	}
}

func (thumbTool) Invoke(_ context.Context, c toolhost.Call) (any, error) {
	return map[string]any{"args": c.Args}, nil
}

// typedDaemonConfig exposes every built-in (the workspace tools are typed)
// and Thumb.
const typedDaemonConfig = "[tools.NodeInfo]\nexpose = true\n[tools.Thumb]\nexpose = true\n" +
	"[tools.DirectoryTree]\nexpose = true\n[tools.ReadFile]\nexpose = true\n[tools.SearchFiles]\nexpose = true\n"

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("output differs from %s (-update rewrites it; review the diff):\n%s", path, got)
	}
}

// TestToolsPrompt: `vcpnode tools --prompt` in each format is in golden
// files, and the VCP text is exactly what the server builds from the
// register_tools the fake hub received.
func TestToolsPrompt(t *testing.T) {
	d := startDaemon(t, typedDaemonConfig, thumbTool{})
	conn := d.accept()
	for _, format := range textproto.PromptFormats {
		code, out, errOut := d.ctl("tools", "--prompt", "--format", format)
		if code != exitOK {
			t.Fatalf("--format %s: exit %d: %s", format, code, errOut)
		}
		checkGolden(t, "prompt-"+format+".golden", out)
	}

	m, err := conn.WaitType(d.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	var manifests []toolhost.Manifest
	for _, raw := range m.(wsproto.RegisterTools).Tools {
		var mf toolhost.Manifest
		if err := json.Unmarshal(raw, &mf); err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, mf)
	}
	if len(manifests) != 6 {
		t.Fatalf("register_tools carried %d tools, want Echo, NodeInfo, Thumb and the three workspace built-ins", len(manifests))
	}
	_, out, _ := d.ctl("tools", "--prompt")
	if want := textproto.VCPPrompt(manifests) + "\n"; out != want {
		t.Errorf("tools --prompt differs from the text the server builds from register_tools:\n%s\nwant:\n%s", out, want)
	}

	var resp struct {
		Format string
		Tools  int
		Text   string
	}
	d.ctlJSON(&resp, "tools", "--prompt", "--format", "json")
	if resp.Format != "json" || resp.Tools != 6 || !strings.Contains(resp.Text, `{"tool_name":"DirectoryTree","parameters":{}}`) {
		t.Errorf("json is the {\"tool_name\"} text format, not openai: %+v", resp)
	}
	d.ctlJSON(&resp, "tools", "--prompt", "--format", "openai")
	if resp.Format != "openai" || resp.Tools != 6 || !json.Valid([]byte(resp.Text)) {
		t.Errorf("--json: %+v", resp)
	}
	var tools []struct {
		Function struct {
			Name       string
			Parameters struct{ Properties map[string]any }
		}
	}
	if err := json.Unmarshal([]byte(resp.Text), &tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if len(tool.Function.Parameters.Properties) == 0 && tool.Function.Name != "NodeInfo" {
			t.Errorf("%s is exposed with no properties: %s", tool.Function.Name, resp.Text)
		}
	}
	if _, out, _ := d.ctl("tools", "--prompt", "--format", "xml"); !strings.HasSuffix(out, "</output_instructions>\n") {
		t.Errorf("xml does not end with <output_instructions>:\n%s", out)
	}
	if code, _, errOut := d.ctl("tools", "--prompt", "--format", "yaml"); code != exitUsage || !strings.Contains(errOut, `--format "yaml" is not one of vcp, vcp-definition, xml, openai, anthropic, gemini`) {
		t.Errorf("bad format: exit %d, %s", code, errOut)
	}
	if code, _, errOut := d.ctl("tools", "--format", "xml"); code != exitUsage || !strings.Contains(errOut, "add --prompt") {
		t.Errorf("--format without --prompt: exit %d, %s", code, errOut)
	}
}

const sampleReply = `Let me look first.
<think>maybe <<<[TOOL_REQUEST]>>>tool_name:「始」Echo「末」<<<[END_TOOL_REQUEST]>>></think>
<<<[TOOL_REQUEST]>>>
tool_name:「始」Thumb「末」,
path:「始」cat.png「末」,
size:「始」128「末」,
maid:「始」Nova「末」
<<<[END_TOOL_REQUEST]>>>
<function_calls>
<invoke name="Echo">
<parameter name="message">hi &amp; bye</parameter>
</invoke>
</function_calls>
{"tool_name": "Thumb", "parameters": {"path": "dog.png", "size": "big", "format": "gif"}}
<<<[TOOL_REQUEST]>>>
tool_name:「始」Echo「末」
`

func TestParseCommand(t *testing.T) {
	file := writeFile(t, "reply.txt", sampleReply, 0o600)
	ta := newTestApp(t)
	if code := ta.run("parse", file); code != exitOK {
		t.Fatalf("exit %d: %s", code, ta.stderr)
	}
	checkGolden(t, "parse.golden", ta.stdout.String())
	wantErr := "line 2: vcp block rejected: inside a reasoning block (<think>…</think>), which the server removes before parsing (§1)\n" +
		"line 15: vcp block rejected: no end marker <<<[END_TOOL_REQUEST]>>> follows: the server drops this block and reads no block after it (§2)\n"
	if got := ta.stderr.String(); got != wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, wantErr)
	}

	// --json from standard input: one object per call, rejected blocks on stderr.
	ta = newTestApp(t)
	ta.app.stdin = strings.NewReader(sampleReply)
	if code := ta.run("parse", "-", "--json"); code != exitOK {
		t.Fatalf("exit %d: %s", code, ta.stderr)
	}
	var calls []struct {
		Format string
		Line   int
		Tool   string
		Args   map[string]any
	}
	if err := json.Unmarshal([]byte(ta.stdout.String()), &calls); err != nil {
		t.Fatalf("--json printed %q: %v", ta.stdout, err)
	}
	if len(calls) != 3 || calls[0].Format != "vcp" || calls[0].Line != 3 || calls[0].Tool != "Thumb" || calls[0].Args["size"] != "128" ||
		calls[1].Format != "xml" || calls[1].Args["message"] != "hi & bye" || calls[2].Format != "json" || calls[2].Line != 14 {
		t.Errorf("--json calls: %+v", calls)
	}
	if !strings.Contains(ta.stderr.String(), "line 15: vcp block rejected") {
		t.Errorf("stderr: %s", ta.stderr)
	}

	// No call at all: exit 1.
	ta = newTestApp(t)
	ta.app.stdin = strings.NewReader("<<<[TOOL_REQUEST]>>>\nnote: nothing\n<<<[END_TOOL_REQUEST]>>>\n")
	if code := ta.run("parse", "--json"); code != exitError {
		t.Fatalf("exit %d, want 1", code)
	}
	if ta.stdout.String() != "[]\n" || !strings.Contains(ta.stderr.String(), "vcpnode: no tool call found (1 block(s) rejected, see above)") {
		t.Errorf("stdout %q stderr %q", ta.stdout, ta.stderr)
	}
	// --fuzzy reads what strict mode does not.
	ta = newTestApp(t)
	ta.app.stdin = strings.NewReader("<<[TOOL_REQUEST]>> tool_name:{始}Echo{末} <<[END_TOOL_REQUEST]>>")
	if code := ta.run("parse"); code != exitError {
		t.Errorf("strict: exit %d, want 1", code)
	}
	ta = newTestApp(t)
	ta.app.stdin = strings.NewReader("<<[TOOL_REQUEST]>> tool_name:{始}Echo{末} <<[END_TOOL_REQUEST]>>")
	if code := ta.run("parse", "--fuzzy"); code != exitOK || ta.stdout.String() != "line 1: vcp call of Echo\n" {
		t.Errorf("fuzzy: exit %d, %q", code, ta.stdout)
	}
	ta = newTestApp(t)
	if code := ta.run("parse", filepath.Join(t.TempDir(), "missing.txt")); code != exitError || !strings.Contains(ta.stderr.String(), "no such file") {
		t.Errorf("missing file: exit %d, %s", code, ta.stderr)
	}
}

// TestCallText runs the calls of a reply through the daemon: the typed tool
// gets coerced arguments, and the wrong call its error with the invocation
// text; the exit code is 1 because one call failed.
func TestCallText(t *testing.T) {
	d := startDaemon(t, typedDaemonConfig, thumbTool{})
	d.accept()
	file := writeFile(t, "reply.txt", sampleReply, 0o600)
	code, out, errOut := d.ctl("call", "--text", file)
	if code != exitError {
		t.Fatalf("exit %d, want 1 (one call fails)\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"call 1 of 3, line 3: Thumb ok after",
		`"args": {` + "\n" + `    "crop": false,` + "\n" + `    "format": "png",` + "\n" + `    "maid": "Nova",` + "\n" + `    "path": "cat.png",` + "\n" + `    "size": 128`,
		"call 2 of 3, line 10: Echo ok after",
		"message: hi & bye",
		"call 3 of 3, line 14: Thumb failed (bad_args, request ",
		"invalid arguments for Thumb:\n" +
			"- argument \"size\": \"big\" is not an integer\n" +
			"- argument \"format\": \"gif\" is not one of \"png\", \"jpeg\"\n" +
			"Call it like this:\n" +
			"Makes a thumbnail of an image on this machine.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "line 15: vcp block rejected") || !strings.Contains(errOut, "vcpnode: tool failed: 1 of 3 calls failed") {
		t.Errorf("stderr:\n%s", errOut)
	}

	var results []TextCallResult
	ta := newTestApp(t)
	ta.app.stdin = strings.NewReader(sampleReply)
	if code := ta.run("call", "--text", "-", "--json", "--socket", d.socket); code != exitError {
		t.Fatalf("--json: exit %d: %s", code, ta.stderr)
	}
	if err := json.Unmarshal([]byte(ta.stdout.String()), &results); err != nil || len(results) != 3 || !results[0].Response.OK || results[2].Response.OK {
		t.Errorf("--json results (%v): %s", err, ta.stdout)
	}
	if code, _, errOut := d.ctl("call", "Echo", "--text", file); code != exitUsage || !strings.Contains(errOut, "give no TOOL") {
		t.Errorf("TOOL with --text: exit %d %s", code, errOut)
	}
}

// TestParseEveryFormat runs `vcpnode parse --json` over the reply of each
// format in toolhost/textproto/testdata/formats: its standard output is the
// calls of the reviewed golden file, its standard error one line per
// rejection of it.
func TestParseEveryFormat(t *testing.T) {
	for _, f := range textproto.Formats {
		t.Run(string(f), func(t *testing.T) {
			base := filepath.Join("..", "..", "toolhost", "textproto", "testdata", "formats", string(f))
			golden, err := os.ReadFile(base + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			var want textproto.Result
			if err := json.Unmarshal(golden, &want); err != nil {
				t.Fatal(err)
			}
			ta := newTestApp(t)
			if code := ta.run("parse", "--json", base+".txt"); code != exitOK {
				t.Fatalf("exit %d: %s", code, ta.stderr)
			}
			var got []textproto.Call
			if err := json.Unmarshal([]byte(ta.stdout.String()), &got); err != nil {
				t.Fatalf("--json printed %q: %v", ta.stdout, err)
			}
			if !reflect.DeepEqual(got, want.Calls) {
				t.Errorf("calls differ from %s.golden:\ngot:  %+v\nwant: %+v", base, got, want.Calls)
			}
			var lines strings.Builder
			for _, r := range want.Rejected {
				fmt.Fprintf(&lines, "line %d: %s block rejected: %s\n", r.Line, r.Format, r.Reason)
			}
			if ta.stderr.String() != lines.String() {
				t.Errorf("stderr:\n%s\nwant:\n%s", ta.stderr, lines.String())
			}
		})
	}
}

// TestParseFormatsFlag: --formats reads only the formats named; a fenced
// call is shown as an example.
func TestParseFormatsFlag(t *testing.T) {
	file := writeFile(t, "reply.txt", sampleReply+"```\n{\"tool_name\": \"Shown\", \"parameters\": {}}\n```\n", 0o600)
	ta := newTestApp(t)
	if code := ta.run("parse", "--json", "--formats", "xml,json", file); code != exitOK {
		t.Fatalf("exit %d: %s", code, ta.stderr)
	}
	var calls []textproto.Call
	if err := json.Unmarshal([]byte(ta.stdout.String()), &calls); err != nil || len(calls) != 3 {
		t.Fatalf("%v\n%s", err, ta.stdout)
	}
	for i, want := range []string{"xml", "json", "json"} {
		if string(calls[i].Format) != want {
			t.Errorf("call %d: %s, want %s", i, calls[i].Format, want)
		}
	}
	if calls[1].Example || !calls[2].Example {
		t.Errorf("examples: %+v", calls)
	}
	ta = newTestApp(t)
	if code := ta.run("parse", file, "--formats", "tool_calls"); code != exitError {
		t.Errorf("no tool_calls in the reply: exit %d", code)
	}
	ta = newTestApp(t)
	if code := ta.run("parse", file, "--formats", "vcp,bogus"); code != exitUsage || !strings.Contains(ta.stderr.String(), `format "bogus" is not one of`) {
		t.Errorf("bogus: exit %d %s", code, ta.stderr)
	}
}
