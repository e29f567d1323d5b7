package controlapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"github.com/vcpnode/vcpnode/config"
)

// ErrNotRunning: nothing answers on the control socket.
var ErrNotRunning = errors.New("vcpnode is not running")

// NotRunningError says no daemon answers at Socket.
type NotRunningError struct {
	Socket string
	Err    error // the dial error
}

func (e *NotRunningError) Error() string {
	return fmt.Sprintf("cannot reach vcpnode at %s: is it running?", e.Socket)
}

// Is makes errors.Is(err, ErrNotRunning) true.
func (e *NotRunningError) Is(target error) bool { return target == ErrNotRunning }

func (e *NotRunningError) Unwrap() error { return e.Err }

// APIError is an error the daemon answered with.
type APIError struct {
	Status  int    // the HTTP status code
	Message string // the daemon's {"error": …}
}

func (e *APIError) Error() string { return e.Message }

// ControlClient talks to a running daemon over its control socket. The CLI
// commands are thin wrappers around it.
type ControlClient struct {
	socket string
	hc     *http.Client
}

// NewControlClient returns a client for the daemon listening on socket.
func NewControlClient(socket string) *ControlClient {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		DisableCompression: true,
	}
	return &ControlClient{socket: socket, hc: &http.Client{Transport: tr}}
}

// Socket is the path the client dials.
func (c *ControlClient) Socket() string { return c.socket }

// Close releases idle connections.
func (c *ControlClient) Close() { c.hc.CloseIdleConnections() }

// Status is GET /v1/status.
func (c *ControlClient) Status(ctx context.Context) (StatusResponse, error) {
	var out StatusResponse
	return out, c.Do(ctx, http.MethodGet, PathStatus, nil, &out)
}

// Tools is GET /v1/tools.
func (c *ControlClient) Tools(ctx context.Context) ([]ToolStatus, error) {
	var out ToolsResponse
	return out.Tools, c.Do(ctx, http.MethodGet, PathTools, nil, &out)
}

// Prompt is GET /v1/prompt: the exposed tools as a model is told about
// them, in format (vcp, xml or json; "" means vcp).
func (c *ControlClient) Prompt(ctx context.Context, format string) (PromptResponse, error) {
	var out PromptResponse
	path := PathPrompt
	if format != "" {
		path += "?format=" + url.QueryEscape(format)
	}
	return out, c.Do(ctx, http.MethodGet, path, nil, &out)
}

// Call runs a tool in the daemon as the owner (POST /v1/call). A tool that
// fails is not an error here: see CallResponse.OK.
func (c *ControlClient) Call(ctx context.Context, req CallRequest) (CallResponse, error) {
	var out CallResponse
	return out, c.Do(ctx, http.MethodPost, PathCall, req, &out)
}

// Reload makes the daemon re-read its config file (POST /v1/reload).
func (c *ControlClient) Reload(ctx context.Context) (ReloadResponse, error) {
	var out ReloadResponse
	return out, c.Do(ctx, http.MethodPost, PathReload, nil, &out)
}

// Register sends the tools held back by [node] register = false (POST /v1/register).
func (c *ControlClient) Register(ctx context.Context) (RegisterResponse, error) {
	var out RegisterResponse
	return out, c.Do(ctx, http.MethodPost, PathRegister, nil, &out)
}

// ToolOverride changes one tool's switches (POST /v1/tools/{name}/override).
func (c *ControlClient) ToolOverride(ctx context.Context, name string, req ToolOverrideRequest) (ToolOverrideResponse, error) {
	var out ToolOverrideResponse
	return out, c.Do(ctx, http.MethodPost, "/v1/tools/"+url.PathEscape(name)+"/override", req, &out)
}

// Reconnect cuts a backoff wait short (POST /v1/reconnect).
func (c *ControlClient) Reconnect(ctx context.Context) (ReconnectResponse, error) {
	var out ReconnectResponse
	return out, c.Do(ctx, http.MethodPost, PathReconnect, nil, &out)
}

// ConsoleLogin mints a one-time web console login URL (POST /v1/console/login).
func (c *ControlClient) ConsoleLogin(ctx context.Context) (ConsoleLoginResponse, error) {
	var out ConsoleLoginResponse
	return out, c.Do(ctx, http.MethodPost, PathConsoleLogin, nil, &out)
}

// Placeholders lists the daemon's placeholders (GET /v1/placeholders).
func (c *ControlClient) Placeholders(ctx context.Context) (PlaceholdersResponse, error) {
	var out PlaceholdersResponse
	return out, c.Do(ctx, http.MethodGet, PathPlaceholders, nil, &out)
}

// MCPTools lists the tools offered to MCP clients: [mcp.serve] tools, or
// by default the tools exposed to the VCP server.
func (c *ControlClient) MCPTools(ctx context.Context) ([]MCPTool, error) {
	var out MCPToolsResponse
	return out.Tools, c.Do(ctx, http.MethodGet, PathMCPTools, nil, &out)
}

// Approvals lists the calls awaiting the owner (GET /v1/approvals).
func (c *ControlClient) Approvals(ctx context.Context) (ApprovalsResponse, error) {
	var out ApprovalsResponse
	return out, c.Do(ctx, http.MethodGet, PathApprovals, nil, &out)
}

// Decide approves or denies a pending call; reason goes with a denial.
func (c *ControlClient) Decide(ctx context.Context, id string, approve bool, reason string) (DecisionResponse, error) {
	return c.DecideWith(ctx, id, approve, DecisionRequest{Reason: reason})
}

// Do sends body (JSON, or none when nil) to path and decodes the answer
// into out; the typed methods wrap it. An answer other than 200 OK is an
// *APIError.
func (c *ControlClient) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	// The host is a placeholder: the transport always dials the socket.
	req, err := http.NewRequestWithContext(ctx, method, "http://vcpnode"+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.dialError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return apiError(resp)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("read the answer of vcpnode at %s: %w", c.socket, err)
	}
	return nil
}

// dialError turns "nothing there" into NotRunningError and explains a
// permission problem; other errors pass through.
func (c *ControlClient) dialError(err error) error {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return fmt.Errorf("talk to vcpnode at %s: %w", c.socket, err)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED):
		return &NotRunningError{Socket: c.socket, Err: err}
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot open the control socket %s: permission denied; run this as root or as the user the daemon runs as: %w", c.socket, err)
	}
	return fmt.Errorf("cannot reach vcpnode at %s: %w", c.socket, err)
}

// apiError is the daemon's {"error": …} answer to a failed request.
func apiError(resp *http.Response) *APIError {
	var e ErrorResponse
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64*config.KiB))
	if json.Unmarshal(data, &e) != nil || e.Error == "" {
		e.Error = fmt.Sprintf("vcpnode answered %s without an explanation", resp.Status)
	}
	return &APIError{Status: resp.StatusCode, Message: e.Error}
}

// Events streams GET /v1/events, calling each for every line until ctx
// ends, the daemon closes the stream (io.EOF) or each fails.
func (c *ControlClient) Events(ctx context.Context, q EventsQuery, each func(Event) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://vcpnode"+PathEvents+"?"+q.Values().Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.dialError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return apiError(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*config.KiB), 4*config.MiB)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("read the event stream of vcpnode at %s: %w", c.socket, err)
		}
		if err := each(ev); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("read the event stream of vcpnode at %s: %w", c.socket, err)
	}
	return io.EOF
}
