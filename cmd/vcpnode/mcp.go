package main

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/toolconfig"
)

func newMCPCmd(a *app) *cobra.Command {
	var f controlFlags
	var httpMode bool
	var listen string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Offer this node's tools to an MCP client (an editor) over stdio, through the daemon",
		Long: "mcp is an MCP server on stdin/stdout for a local MCP client: put it in the client's\n" +
			"MCP config as a command. It is a thin client of the running daemon: tools/list shows\n" +
			"[mcp.serve] tools (default: the tools exposed to the VCP server), and tools/call runs\n" +
			"them in the daemon like `vcpnode call`, with the owner's approval gate (approval =\n" +
			"\"ask\" waits for `vcpnode approve`), the tool's deadline, the limits and the audit.\n" +
			"Each tool's inputSchema is what `tools --prompt --format openai` gives it: a typed\n" +
			"tool's schema, or a plugin's parameter names from its examples (strings); plugins\n" +
			"also publish their invocation text and take any other string argument.\n\n" +
			"--http serves the same over streamable HTTP instead, on [mcp.serve] listen (or\n" +
			"--listen), loopback only, for clients that send the bearer token kept in\n" +
			"[mcp.serve] token_file (a file of mode 0600).",
		Example: "  # in an editor's MCP config:\n" +
			"  {\"mcpServers\": {\"vcpnode\": {\"command\": \"vcpnode\", \"args\": [\"mcp\"]}}}\n" +
			"  vcpnode mcp --http --config /etc/vcpnode/config.toml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var web mcpHTTP
			if httpMode {
				// The settings first: a config that cannot serve is said
				// before the daemon is asked anything.
				var err error
				if web, err = a.mcpHTTPSettings(&f, listen); err != nil {
					return err
				}
			}
			sock, err := a.controlSocket(&f)
			if err != nil {
				return err
			}
			c := controlapi.NewControlClient(sock)
			defer c.Close()
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			lctx, cancel := context.WithTimeout(ctx, controlTimeout)
			tools, err := c.MCPTools(lctx)
			cancel()
			if err != nil {
				return err
			}
			bridge := newMCPServer(c, tools)
			// The daemon's tool set changes with reloads, plugin folders and
			// MCP servers: follow it, and clients hear list_changed.
			fctx, stopFollow := context.WithCancel(ctx)
			defer stopFollow()
			go bridge.follow(fctx, a.mcpRefreshEvery(), a.stderr)
			srv := bridge.srv
			if httpMode {
				return a.serveMCPHTTP(ctx, srv, web)
			}
			fmt.Fprintf(a.stderr, "vcpnode mcp: serving %d tools of the daemon at %s on stdio\n", len(tools), sock)
			in := a.stdin
			if in == nil {
				in = cmd.InOrStdin()
			}
			t := &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{a.stdout}}
			// The client closing its end while a message (a list_changed
			// notification) is on its way is the client leaving, not a failure.
			if err := srv.Run(ctx, t); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) &&
				!errors.Is(err, syscall.EPIPE) && ctx.Err() == nil {
				return fmt.Errorf("mcp: %w", err)
			}
			return nil
		},
	}
	f.add(cmd, false)
	cmd.Flags().BoolVar(&httpMode, "http", false, "serve streamable HTTP on [mcp.serve] listen instead of stdio")
	cmd.Flags().StringVar(&listen, "listen", "", "with --http: the loopback `ADDR` (host:port), overriding [mcp.serve] listen")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// newMCPServer publishes tools as MCP tools whose calls go to the daemon.
func newMCPServer(c *controlapi.ControlClient, tools []controlapi.MCPTool) *mcpBridge {
	b := &mcpBridge{c: c, offered: map[string]controlapi.MCPTool{},
		srv: sdk.NewServer(&sdk.Implementation{Name: "vcpnode", Title: "vcpnode", Version: version},
			// Clients are told to follow list changes even when no tool is offered yet.
			&sdk.ServerOptions{Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}}})}
	b.sync(tools)
	return b
}

// callTool runs tool name in the daemon for an MCP client.
func (b *mcpBridge) callTool(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := map[string]json.RawMessage{}
		if raw := req.Params.Arguments; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &args); err != nil {
				return errorResult("arguments must be a JSON object: " + err.Error()), nil
			}
		}
		// No timeout here: the tool's own deadline bounds the call in
		// the daemon; the client's cancellation ends this request.
		call := controlapi.CallRequest{Tool: name, Args: args, Via: controlapi.ViaMCP}
		var res controlapi.CallResponse
		var err error
		if token := req.Params.GetProgressToken(); token != nil {
			// The client follows progress: an asynchronous server tool's
			// task events become progress notifications, in order.
			n := 0
			res, err = b.c.CallWithProgress(ctx, call, func(p controlapi.CallProgress) {
				// A count of dropped events moves the progress past them.
				n += max(1, p.Dropped)
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: p.Message})
			})
		} else {
			res, err = b.c.Call(ctx, call)
		}
		if err != nil {
			return errorResult(err.Error()), nil
		}
		if !res.OK {
			return errorResult(res.Error), nil
		}
		return mcpResult(res.Result), nil
	}
}

func errorResult(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// mcpResult maps a VCP result back: text parts to text, image_url parts
// with a data: URL to images, anything else to its JSON text.
func mcpResult(raw json.RawMessage) *sdk.CallToolResult {
	var body struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL *struct {
				URL string `json:"url"`
			} `json:"image_url"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Content == nil {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}}
	}
	out := &sdk.CallToolResult{Content: []sdk.Content{}}
	for _, p := range body.Content {
		switch {
		case p.Type == "text":
			out.Content = append(out.Content, &sdk.TextContent{Text: p.Text})
		case p.Type == "image_url" && p.ImageURL != nil:
			if mime, data, ok := dataURL(p.ImageURL.URL); ok {
				out.Content = append(out.Content, &sdk.ImageContent{MIMEType: mime, Data: data})
			} else {
				out.Content = append(out.Content, &sdk.TextContent{Text: "image: " + p.ImageURL.URL})
			}
		default:
			b, _ := json.Marshal(p)
			out.Content = append(out.Content, &sdk.TextContent{Text: string(b)})
		}
	}
	if len(body.StructuredContent) > 0 && string(body.StructuredContent) != "null" {
		out.StructuredContent = body.StructuredContent
	}
	return out
}

// dataURL decodes "data:<mime>;base64,<data>".
func dataURL(u string) (string, []byte, bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", nil, false
	}
	meta, payload, ok := strings.Cut(rest, ",")
	mime, isB64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isB64 {
		return "", nil, false
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, false
	}
	return mime, data, true
}

// mcpHTTP is what `mcp --http` serves with.
type mcpHTTP struct {
	listen, token, tokenFile string
}

// mcpHTTPSettings reads [mcp.serve] of the config found as every command
// finds it; --listen overrides its address.
func (a *app) mcpHTTPSettings(f *controlFlags, listen string) (mcpHTTP, error) {
	var serve config.MCPServeConfig
	if path := a.findConfig(f.config); path != "" {
		cfg, err := config.Load(path, toolconfig.Check)
		if err != nil {
			return mcpHTTP{}, err
		}
		serve = cfg.MCP.Serve
	}
	if listen == "" {
		listen = serve.Listen
	}
	if listen == "" {
		return mcpHTTP{}, usageErrorf("--http needs an address: [mcp.serve] listen in the config (--config or $%s), or --listen", envConfig)
	}
	if msg := config.LoopbackListenProblem(listen); msg != "" {
		return mcpHTTP{}, usageErrorf("%s", msg)
	}
	if serve.TokenFile == "" {
		return mcpHTTP{}, usageErrorf("--http needs [mcp.serve] token_file: the file (mode 0600) holding the bearer token clients send")
	}
	token, err := readTokenFile(serve.TokenFile)
	if err != nil {
		return mcpHTTP{}, err
	}
	return mcpHTTP{listen: listen, token: token, tokenFile: serve.TokenFile}, nil
}

// serveMCPHTTP serves srv over streamable HTTP on a loopback address, to
// clients that send the bearer token of [mcp.serve] token_file.
func (a *app) serveMCPHTTP(ctx context.Context, srv *sdk.Server, web mcpHTTP) error {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	want := []byte("Bearer " + web.token)
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", web.listen)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	sigs, stopSigs := a.signals()
	defer stopSigs()
	hs := &http.Server{Handler: auth, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(a.stderr, "vcpnode mcp: serving MCP over HTTP at http://%s/ (bearer token from %s)\n", ln.Addr(), web.tokenFile)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("mcp: %w", err)
	case <-sigs:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return nil
}

// readTokenFile reads a bearer token from a file only its owner can read.
func readTokenFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("mcp.serve.token_file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("mcp.serve.token_file %s has mode %04o; it holds a secret: chmod 600 it", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("mcp.serve.token_file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < 16 {
		return "", fmt.Errorf("mcp.serve.token_file %s holds a token of %d characters; use at least 16 (e.g. openssl rand -hex 32)", path, len(token))
	}
	return token, nil
}
