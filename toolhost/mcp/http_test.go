package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vcpnode/vcpnode/toolhost"
)

// httpServer serves the test server over streamable HTTP on loopback and
// refuses requests without the bearer token.
func httpServer(t *testing.T, token string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	srv := newTestServer("http")
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var refused atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			refused.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &refused
}

func TestHTTPServerWithHeaderFromEnvironment(t *testing.T) {
	ts, _ := httpServer(t, "s3cret")
	f := newFixture(t, func(o *Options) {
		o.Getenv = func(k string) string {
			if k == "NOTES_TOKEN" {
				return "Bearer s3cret"
			}
			return ""
		}
	})
	// The in-process server leaves its markers where the test looks.
	dir := filepath.Join(f.dir, "notes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envMarkerDir, dir)
	f.start(ServerConfig{Name: "notes", URL: ts.URL, Headers: map[string]string{"Authorization": "$NOTES_TOKEN"}})
	if st := f.status("notes"); st.State != StateRunning || st.Transport != "http" {
		t.Fatalf("status = %+v", st)
	}
	tool := f.tool("McpNotes")
	got, err := call(context.Background(), t, tool, map[string]any{"command": "echo", "msg": "over http"})
	if err != nil {
		t.Fatal(err)
	}
	if s := resultText(t, got); s != `{"msg":"over http"}` {
		t.Errorf("echo = %s", s)
	}
	got, err = call(context.Background(), t, tool, map[string]any{"command": "picture"})
	if err != nil {
		t.Fatal(err)
	}
	if r := got.(callResult); len(r.Content) != 2 || r.Content[1].ImageURL == nil ||
		!strings.HasPrefix(r.Content[1].ImageURL.URL, "data:image/png;base64,") {
		t.Errorf("picture = %+v", r)
	}
	if _, err := call(context.Background(), t, tool, map[string]any{"command": "fail"}); err == nil || err.Error() != "disk full" {
		t.Errorf("fail: %v", err)
	}

	// Cancellation reaches the server over HTTP too.
	f.cancelSlowCall("notes", tool)
}

func TestHTTPHeaderProblemsAreReported(t *testing.T) {
	ts, refused := httpServer(t, "s3cret")
	f := newFixture(t, func(o *Options) {
		o.Secret = []string{"VCPNODE_KEY"}
		o.Getenv = func(k string) string { return "value-of-" + k }
	})
	f.start(
		ServerConfig{Name: "unset", URL: ts.URL, Headers: map[string]string{"Authorization": "$EMPTY"}},
		ServerConfig{Name: "key", URL: ts.URL, Headers: map[string]string{"X-Key": "$VCPNODE_KEY"}},
		ServerConfig{Name: "wrong", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer nope"}},
	)
	if st := f.status("key"); !strings.Contains(st.LastError, "header X-Key: $VCPNODE_KEY is the node's secret and is never sent") ||
		strings.Contains(st.LastError, "value-of") {
		t.Errorf("key: %+v", st)
	}
	if st := f.status("wrong"); st.State == StateRunning || st.LastError == "" {
		t.Errorf("wrong token: %+v", st)
	}
	if refused.Load() == 0 {
		t.Error("the server never saw the wrong token")
	}
	if len(f.host.Tools()) != 0 {
		t.Errorf("tools = %v", f.host.Tools())
	}
}

func TestHTTPLargeResultMeetsTheDispatcherCap(t *testing.T) {
	ts, _ := httpServer(t, "tok")
	f := newFixture(t)
	f.start(ServerConfig{Name: "web", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer tok"}})
	reg := toolhost.NewRegistry()
	if err := reg.Add(f.tool("McpWeb")); err != nil {
		t.Fatal(err)
	}
	d := toolhost.NewDispatcher(reg, toolhost.Policy{Oversize: toolhost.OversizeError}, toolhost.Limits{MaxResultBytes: 1 << 20}, f.host.o.Log)
	out := make(chan toolhost.Outcome, 1)
	d.Dispatch(context.Background(), "McpWeb", toolhost.Call{RequestID: "b1", Local: true,
		// 2 MiB: the cap is the point here; the 50 MiB result is sent over stdio.
		Args: map[string]json.RawMessage{"command": json.RawMessage(`"big"`), "bytes": json.RawMessage(`2097152`)}}, func(o toolhost.Outcome) { out <- o })
	select {
	case o := <-out:
		if !errors.Is(o.Cause, toolhost.ErrResultTooLarge) {
			t.Errorf("outcome = %v", o.Err)
		}
	case <-time.After(waitLimit):
		t.Fatal("no outcome")
	}
	if _, err := call(context.Background(), t, f.tool("McpWeb"), map[string]any{"command": "echo", "msg": "ok"}); err != nil {
		t.Errorf("after the large result: %v", err)
	}
}
