package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The "library" test server has one tool, resources (text, image, other
// binary, a template) and prompts, so its VCP tool gains the node's
// resource and prompt commands.
func newLibraryServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "library", Title: "Library", Version: "0.3.0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "search", Description: "Searches the notes.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("found: " + string(req.Params.Arguments)), nil
		})
	contents := map[string]*sdk.ResourceContents{
		"note://notes/a.md":     {URI: "note://notes/a.md", MIMEType: "text/markdown", Text: "# A\nThe first note.\n"},
		"note://notes/logo.png": {URI: "note://notes/logo.png", MIMEType: "image/png", Blob: testPNG},
		"note://notes/data.bin": {URI: "note://notes/data.bin", MIMEType: "application/octet-stream", Blob: make([]byte, 1000)},
	}
	read := func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		if c, ok := contents[req.Params.URI]; ok {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
		}
		if name, ok := strings.CutPrefix(req.Params.URI, "note://notes/"); ok {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "made from the template: " + name}}}, nil
		}
		return nil, sdk.ResourceNotFoundError(req.Params.URI)
	}
	srv.AddResource(&sdk.Resource{URI: "note://notes/a.md", Name: "a.md", Title: "Note A", MIMEType: "text/markdown", Size: 20, Description: "The first\nnote."}, read)
	srv.AddResource(&sdk.Resource{URI: "note://notes/logo.png", Name: "logo.png", MIMEType: "image/png"}, read)
	srv.AddResource(&sdk.Resource{URI: "note://notes/data.bin", Name: "data.bin", MIMEType: "application/octet-stream", Size: 1000}, read)
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "note://notes/{name}", Name: "note", Description: "Any note by name."}, read)

	srv.AddPrompt(&sdk.Prompt{Name: "summarize", Title: "Summarize a note", Description: "Asks for a summary.",
		Arguments: []*sdk.PromptArgument{{Name: "note", Description: "which note", Required: true}, {Name: "style", Description: "short or long"}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			a := req.Params.Arguments
			return &sdk.GetPromptResult{Description: "A summary request.", Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: fmt.Sprintf("Summarize %s, %s.", a["note"], a["style"])}},
				{Role: "user", Content: &sdk.EmbeddedResource{Resource: contents["note://notes/a.md"]}},
			}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "hello", Description: "Says hello."},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "assistant", Content: &sdk.TextContent{Text: "Hello."}}}}, nil
		})
	return srv
}

const (
	wantResources = `MCP server lib has 3 resources (read one with read_resource and its uri):
- note://notes/a.md (Note A, a.md, text/markdown, 20 bytes): The first note.
- note://notes/data.bin (data.bin, application/octet-stream, 1000 bytes)
- note://notes/logo.png (logo.png, image/png)
1 resource template (fill in the {…} parts to make a uri):
- note://notes/{name} (note): Any note by name.
`
	wantPrompts = `MCP server lib has 2 prompts (get one with get_prompt, its name and its arguments):
- hello: Says hello.
  no arguments
- summarize (Summarize a note): Asks for a summary.
  arguments:
  - note (required): which note
  - style (optional): short or long
`
)

// checkLibrary reads the library server's resources and prompts through
// its VCP tool, as a model would.
func checkLibrary(t *testing.T, tool *Tool) {
	t.Helper()
	var names []string
	for _, c := range tool.Spec().Commands {
		names = append(names, c.Command)
		if c.Schema == nil || len(c.Schema.Raw) == 0 {
			t.Errorf("command %s has no schema", c.Command)
		}
	}
	if want := []string{"search", "list_resources", "read_resource", "list_prompts", "get_prompt"}; !slices.Equal(names, want) {
		t.Errorf("commands = %v, want %v", names, want)
	}
	read := tool.Spec().Commands[2].Schema
	if len(read.Params) != 1 || read.Params[0].Name != "uri" || !read.Params[0].Required {
		t.Errorf("read_resource params = %+v", read.Params)
	}
	get := tool.Spec().Commands[4].Schema
	if len(get.Params) != 2 || get.Params[0].Name != "name" || !get.Params[0].Required || get.Params[1].Name != "arguments" {
		t.Errorf("get_prompt params = %+v", get.Params)
	}

	ctx := context.Background()
	text := func(args map[string]any) string {
		t.Helper()
		out, err := call(ctx, t, tool, args)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if s, ok := out.(string); ok {
			return s
		}
		return resultText(t, out)
	}
	if got := text(map[string]any{"command": "list_resources"}); got != wantResources {
		t.Errorf("list_resources:\n%s\nwant\n%s", got, wantResources)
	}
	if got := text(map[string]any{"command": "read_resource", "uri": "note://notes/a.md"}); got != "resource note://notes/a.md:\n# A\nThe first note.\n" {
		t.Errorf("read_resource a.md = %q", got)
	}
	if got := text(map[string]any{"command": "read_resource", "uri": "note://notes/data.bin"}); got != "resource note://notes/data.bin (application/octet-stream, 1000 bytes of binary data not shown)" {
		t.Errorf("read_resource data.bin = %q", got)
	}
	if got := text(map[string]any{"command": "read_resource", "uri": "note://notes/b.md"}); got != "resource note://notes/b.md:\nmade from the template: b.md" {
		t.Errorf("read_resource from the template = %q", got)
	}
	out, err := call(ctx, t, tool, map[string]any{"command": "read_resource", "uri": "note://notes/logo.png"})
	if err != nil {
		t.Fatal(err)
	}
	if r := out.(callResult); len(r.Content) != 1 || r.Content[0].ImageURL == nil || !strings.HasPrefix(r.Content[0].ImageURL.URL, "data:image/png;base64,") {
		t.Errorf("read_resource logo.png = %+v", r)
	}
	if got := text(map[string]any{"command": "list_prompts"}); got != wantPrompts {
		t.Errorf("list_prompts:\n%s\nwant\n%s", got, wantPrompts)
	}
	// Arguments in an object, or in a string holding one (VCP's form).
	want := "prompt summarize, 2 messages: A summary request.[user]\nSummarize a.md, short.[user]\nresource note://notes/a.md:\n# A\nThe first note.\n"
	for _, args := range []map[string]any{
		{"command": "get_prompt", "name": "summarize", "arguments": map[string]any{"note": "a.md", "style": "short"}},
		{"command": "get_prompt", "name": "summarize", "arguments": `{"note": "a.md", "style": "short"}`, "maid": "Nova"},
	} {
		if got := text(args); got != want {
			t.Errorf("get_prompt %v:\n%q\nwant\n%q", args, got, want)
		}
	}
	if got := text(map[string]any{"command": "get_prompt", "name": "hello"}); got != "prompt hello, 1 message[assistant]\nHello." {
		t.Errorf("get_prompt hello = %q", got)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"command": "read_resource"}, "read_resource needs uri"},
		{map[string]any{"command": "read_resource", "uri": "other://x"}, "MCP server lib, read_resource: "},
		{map[string]any{"command": "get_prompt"}, "get_prompt needs name"},
		{map[string]any{"command": "get_prompt", "name": "nope"}, "MCP server lib, get_prompt: "},
		{map[string]any{"command": "get_prompt", "name": "hello", "arguments": 3}, "arguments must be an object"},
	} {
		if _, err := call(ctx, t, tool, c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

func TestResourcesAndPromptsOverStdio(t *testing.T) {
	f := newFixture(t)
	f.start(f.stdio("lib", "library"))
	checkLibrary(t, f.tool("McpLib"))
	if st := f.status("lib"); st.Tools != 1 || len(st.Warnings) != 0 {
		t.Errorf("status = %+v; the node's commands are not the server's tools", st)
	}
}

// TestSSETransport: a server behind the SDK's own SSE handler, reached with
// transport = "sse", lists and reads as over the other transports.
func TestSSETransport(t *testing.T) {
	srv := newLibraryServer()
	ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	f := newFixture(t)
	f.start(ServerConfig{Name: "lib", URL: ts.URL, SSE: true})
	if st := f.status("lib"); st.State != StateRunning || st.Transport != "sse" {
		t.Fatalf("status = %+v", st)
	}
	tool := f.tool("McpLib")
	out, err := call(context.Background(), t, tool, map[string]any{"command": "search", "q": "over sse"})
	if err != nil || resultText(t, out) != `found: {"q":"over sse"}` {
		t.Errorf("search = %v, %v", out, err)
	}
	checkLibrary(t, tool)

	// The streamable client cannot talk to an SSE-only server: the
	// transport setting is what makes it work.
	f2 := newFixture(t)
	f2.start(ServerConfig{Name: "lib", URL: ts.URL})
	if st := f2.status("lib"); st.State == StateRunning {
		t.Errorf("a streamable HTTP client reached the SSE server: %+v", st)
	}
}

func TestExtrasFollowIncludeExcludeAndClashes(t *testing.T) {
	init := &sdk.InitializeResult{Capabilities: &sdk.ServerCapabilities{Resources: &sdk.ResourceCapabilities{}, Prompts: &sdk.PromptCapabilities{}}}
	tools := []*sdk.Tool{{Name: "list_prompts", InputSchema: map[string]any{"type": "object"}}, {Name: "other", InputSchema: map[string]any{"type": "object"}}}
	names := func(set *toolSet) []string { return set.names }

	set := buildToolSet(ServerConfig{Name: "x"}, init, tools)
	if want := []string{"list_prompts", "other", "list_resources", "read_resource", "get_prompt"}; !slices.Equal(names(set), want) {
		t.Errorf("commands = %v, want %v", names(set), want)
	}
	if set.tools != 2 || len(set.warnings) != 1 || !strings.Contains(set.warnings[0], "has a tool named list_prompts") {
		t.Errorf("tools %d, warnings %q", set.tools, set.warnings)
	}
	set = buildToolSet(ServerConfig{Name: "x", Exclude: []string{"read_resource", "get_prompt"}}, init, tools)
	if want := []string{"list_prompts", "other", "list_resources"}; !slices.Equal(names(set), want) {
		t.Errorf("with exclude: %v, want %v", names(set), want)
	}
	set = buildToolSet(ServerConfig{Name: "x", Include: []string{"other", "read_resource"}}, init, tools)
	if want := []string{"other", "read_resource"}; !slices.Equal(names(set), want) || len(set.warnings) != 0 {
		t.Errorf("with include: %v, warnings %q; want %v", names(set), set.warnings, want)
	}
	// Capabilities decide: a server without resources or prompts gets none.
	set = buildToolSet(ServerConfig{Name: "x"}, &sdk.InitializeResult{Capabilities: &sdk.ServerCapabilities{}}, tools[1:])
	if want := []string{"other"}; !slices.Equal(names(set), want) {
		t.Errorf("without capabilities: %v", names(set))
	}
}
