package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// The test binary re-executes itself as an MCP server built with the SDK:
// $MCPTEST_SERVER names the kind, $MCPTEST_DIR is where it leaves markers
// (pid, started, cancelled) for the test to see.
const (
	envServerKind = "MCPTEST_SERVER"
	envMarkerDir  = "MCPTEST_DIR"
)

// A 1×1 PNG.
var testPNG = []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89}

func mark(name, content string) {
	if dir := os.Getenv(envMarkerDir); dir != "" {
		tmp := filepath.Join(dir, name+".tmp")
		_ = os.WriteFile(tmp, []byte(content), 0o600)
		_ = os.Rename(tmp, filepath.Join(dir, name))
	}
}

func runTestServer(kind string) {
	mark("pid", fmt.Sprint(os.Getpid()))
	switch kind {
	case "escape": // starts an escapee (its pid is the marker "grandchild"), then serves as usual
		if err := proctreetest.StartEscapee(filepath.Join(os.Getenv(envMarkerDir), "grandchild"), nil); err != nil {
			fmt.Fprintln(os.Stderr, "escapee:", err)
			os.Exit(4)
		}
	case "silent": // never answers initialize
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	case "dies": // exits at once, saying why
		fmt.Fprintln(os.Stderr, "starting up")
		fmt.Fprintln(os.Stderr, "fatal: cannot open /nonexistent/db")
		os.Exit(2)
	case "npmfail": // what npx prints when the package does not exist
		fmt.Fprint(os.Stderr, `npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/@vcpnode%2fno-such-server - Not found
npm error 404
npm error 404  '@vcpnode/no-such-server@*' is not in this registry.
npm error A complete log of this run can be found in: /root/.npm/_logs/debug-0.log
`)
		os.Exit(1)
	case "garbage":
		fmt.Println("hello from a library that prints to stdout")
		fmt.Println("{not json either")
	case "gated": // a package runner still downloading: serves once its gate (a FIFO) is opened
		if g, err := os.Open(filepath.Join(os.Getenv(envMarkerDir), "gate")); err == nil {
			g.Close()
		}
	case "probe": // the sandbox tests' server (sandbox_test.go)
		_ = newProbeServer().Run(context.Background(), &sdk.StdioTransport{})
		return
	}
	srv := newTestServer(kind)
	if kind == "library" { // resources and prompts (library_test.go)
		srv = newLibraryServer()
	}
	_ = srv.Run(context.Background(), &sdk.StdioTransport{})
}

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// newTestServer is the server every kind but the broken ones runs, on stdio
// or streamable HTTP.
func newTestServer(kind string) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "testserver", Title: "Test Server", Version: "1.2.3"},
		&sdk.ServerOptions{Instructions: "Used by the tests of toolhost/mcp."})
	obj := func(props string, required ...string) json.RawMessage {
		req, _ := json.Marshal(required)
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `}`)
	}
	srv.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes its arguments as JSON.",
		InputSchema: obj(`"msg":{"type":"string","description":"what to say"},"count":{"type":"integer","default":1},"loud":{"type":"boolean"}`, "msg")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult(string(req.Params.Arguments)), nil
		})
	srv.AddTool(&sdk.Tool{Name: "odd", Description: "Has argument names VCP cannot carry.",
		InputSchema: obj(`"file-path":{"type":"string"},"command":{"type":"string"}`, "file-path")},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult(string(req.Params.Arguments)), nil
		})
	srv.AddTool(&sdk.Tool{Name: "picture", Description: "Returns an image and some text.", InputSchema: obj(``)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a dot"},
				&sdk.ImageContent{MIMEType: "image/png", Data: testPNG},
			}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "resources", Description: "Returns resources.", InputSchema: obj(``)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{
				Content: []sdk.Content{
					&sdk.ResourceLink{URI: "file:///srv/notes/a.md", Name: "a.md", MIMEType: "text/markdown"},
					&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///srv/notes/b.md", Text: "inline text"}},
				},
				StructuredContent: map[string]any{"count": 2},
			}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "fail", Description: "Always fails.", InputSchema: obj(``)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "disk full"}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "slow", Description: "Waits until cancelled.", InputSchema: obj(``)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			mark("started", "1")
			<-ctx.Done()
			mark("cancelled", "1")
			return nil, ctx.Err()
		})
	srv.AddTool(&sdk.Tool{Name: "crash", Description: "Exits mid-call.", InputSchema: obj(``)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "panic: crashing on purpose")
			os.Exit(3)
			return nil, nil
		})
	srv.AddTool(&sdk.Tool{Name: "big", Description: "Returns 50 MiB of text (8 MiB under -race), or the bytes asked for.",
		InputSchema: obj(`"bytes":{"type":"integer"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Bytes int }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			if args.Bytes <= 0 {
				args.Bytes = bigResultBytes
			}
			return textResult(strings.Repeat("x", args.Bytes)), nil
		})
	srv.AddTool(&sdk.Tool{Name: "broken", Description: "Declares an invalid schema.",
		InputSchema: json.RawMessage(`{"type":"object","properties":"nope"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("unreachable"), nil
		})
	srv.AddTool(&sdk.Tool{Name: "grow", Description: "Adds the tool extra.", InputSchema: obj(``)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			srv.AddTool(&sdk.Tool{Name: "extra", Description: "Appeared later.", InputSchema: obj(``)},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return textResult("extra here"), nil
				})
			return textResult("grown"), nil
		})
	if kind == "garbage" {
		srv.AddTool(&sdk.Tool{Name: "noisy", Description: "Prints to stdout, then answers.", InputSchema: obj(``)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				fmt.Println("debug: noisy tool running")
				return textResult("quiet answer"), nil
			})
	}
	return srv
}
