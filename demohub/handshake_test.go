package demohub

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/wsproto"
)

func TestStartListensOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	host, _, err := net.SplitHostPort(h.Addr())
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("Addr() = %q (%v), want 127.0.0.1:PORT", h.Addr(), err)
	}
	if h.BaseURL() != "http://"+h.Addr() {
		t.Errorf("BaseURL() = %q", h.BaseURL())
	}
	if strings.Contains(h.WSURL(), testKey) {
		t.Errorf("WSURL() = %q shows the key", h.WSURL())
	}
	if !strings.HasSuffix(h.DialURL(), EndpointPrefix+testKey) {
		t.Errorf("DialURL() = %q, want the endpoint with the key", h.DialURL())
	}
}

func TestStartRequiresKey(t *testing.T) {
	t.Parallel()
	if h, err := Start(Options{}); err == nil {
		h.Close()
		t.Fatal("Start without a key succeeded")
	}
}

func TestKeyFromRequestURI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		uri     string
		wantKey string
		wantOK  bool
	}{
		{EndpointPrefix + "abc", "abc", true},
		{EndpointPrefix + "abc?deviceName=box", "abc", true},
		{`\vcp-distributed-server\VCP_Key=abc`, "abc", true},
		{EndpointPrefix + "abc/", "abc/", true}, // the slash becomes part of the key
		{EndpointPrefix + "%61bc", "%61bc", true},
		{EndpointPrefix, "", false},
		{EndpointPrefix + "?x=1", "", false},
		{"/" + EndpointPrefix + "abc", "", false},
		{"/vcp" + EndpointPrefix + "abc", "", false},
		{EndpointPrefix + "a\nb", "", false},
		{"/", "", false},
	}
	for _, tt := range tests {
		key, ok := keyFromRequestURI(tt.uri)
		if key != tt.wantKey || ok != tt.wantOK {
			t.Errorf("keyFromRequestURI(%q) = %q, %v; want %q, %v", tt.uri, key, ok, tt.wantKey, tt.wantOK)
		}
	}
}

// upgradeRequest is a hand-made WebSocket upgrade, sent by net/http so the
// test can check that no HTTP response came back at all.
func upgradeRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	return req
}

func TestBadHandshakeClosedBeforeAnyResponse(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	tests := []struct{ name, target string }{
		{"wrong key", EndpointPrefix + "wrong"},
		{"key with trailing slash", EndpointPrefix + testKey + "/"},
		{"base URL with trailing slash", "/" + EndpointPrefix + testKey},
		{"percent-encoded key", EndpointPrefix + "%74est-key_0.9~"},
		{"empty key", EndpointPrefix},
		{"wrong case in path", "/vcp-distributed-server/VCP_KEY=" + testKey},
		{"path prefix", "/vcp" + EndpointPrefix + testKey},
		{"root", "/"},
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	refusals := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := "ws://" + h.Addr() + tt.target
			ws, resp, err := dialRaw(testContext(t), url)
			if err == nil {
				ws.Close()
				t.Fatalf("dial %s succeeded", tt.target)
			}
			if resp != nil {
				t.Fatalf("dial got HTTP status %d, want no response", resp.StatusCode)
			}
			refusals++

			resp, err = client.Do(upgradeRequest(t, "http://"+h.Addr()+tt.target))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("HTTP upgrade got status %d, want no response", resp.StatusCode)
			}
			if !errors.Is(err, io.EOF) {
				t.Errorf("HTTP upgrade error = %v, want EOF", err)
			}
			refusals++
			if ok, refused := h.Handshakes(); ok != 0 || refused != refusals {
				t.Errorf("Handshakes() = %d, %d; want 0, %d", ok, refused, refusals)
			}
		})
	}

	// The hub is unharmed, and a query string is allowed.
	ws, _, err := dialRaw(testContext(t), h.DialURL()+"?deviceName=box")
	if err != nil {
		t.Fatalf("good dial after refusals: %v", err)
	}
	ws.Close()
	if _, err := h.Accept(testContext(t)); err != nil {
		t.Fatalf("Accept after refusals: %v", err)
	}
	if ok, refused := h.Handshakes(); ok != 1 || refused != refusals {
		t.Errorf("Handshakes() = %d, %d; want 1, %d", ok, refused, refusals)
	}
}

func TestPlainHTTPGets404(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(testContext(t), http.MethodGet, "http://"+h.Addr()+EndpointPrefix+testKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status = %d, want 404", resp.StatusCode)
	}
}

func TestRefuseHandshakes(t *testing.T) {
	t.Parallel()
	h := startHub(t, Options{})
	ctx := testContext(t)
	dialOK := func() bool {
		ws, resp, err := dialRaw(ctx, h.DialURL())
		if err != nil {
			if resp != nil {
				t.Fatalf("refused dial got status %d", resp.StatusCode)
			}
			return false
		}
		ws.Close()
		return true
	}
	steps := []struct {
		refuse int
		want   []bool
	}{
		{2, []bool{false, false, true, true}},
		{-1, []bool{false, false, false}},
		{0, []bool{true}},
	}
	for _, s := range steps {
		h.RefuseHandshakes(s.refuse)
		for i, want := range s.want {
			if got := dialOK(); got != want {
				t.Fatalf("RefuseHandshakes(%d): dial %d ok = %v, want %v", s.refuse, i, got, want)
			}
		}
	}
	// The client sees 101 a moment before the hub counts the connection.
	if err := h.WaitHandshakes(ctx, func(ok, refused int) bool { return ok >= 3 }); err != nil {
		t.Fatalf("WaitHandshakes: %v", err)
	}
	if ok, refused := h.Handshakes(); ok != 3 || refused != 5 {
		t.Errorf("Handshakes() = %d, %d; want 3, 5", ok, refused)
	}
}

func TestConnectionAck(t *testing.T) {
	t.Parallel()
	idPattern := regexp.MustCompile(`^[0-9a-z]+-[0-9a-z]{7}$`)
	for _, noAck := range []bool{false, true} {
		t.Run(map[bool]string{false: "ack", true: "no ack"}[noAck], func(t *testing.T) {
			t.Parallel()
			h := startHub(t, Options{NoAck: noAck})
			ws, c := dialNode(t, h)
			if !idPattern.MatchString(c.ID()) || c.ServerID() != "dist-"+c.ID() {
				t.Errorf("ID() = %q, ServerID() = %q", c.ID(), c.ServerID())
			}
			// A marker after the (possible) ack shows what came first.
			if err := c.Send(testContext(t), wsproto.CancelTool{RequestID: "marker"}); err != nil {
				t.Fatal(err)
			}
			if !noAck {
				_, data := readFrame(t, ws)
				want := `{"type":"connection_ack","message":"WebSocket connection successful for DistributedServer.",` +
					`"data":{"serverId":"dist-` + c.ID() + `","clientId":"` + c.ID() + `"}}`
				if string(data) != want {
					t.Errorf("first frame = %s\nwant %s", data, want)
				}
				if !json.Valid(data) {
					t.Errorf("ack is not JSON")
				}
			}
			env := readType(t, ws, wsproto.TypeCancelTool)
			if env["data"].(map[string]any)["requestId"] != "marker" {
				t.Errorf("marker frame = %v", env)
			}
			sent := c.Sent()
			wantSent := 2
			if noAck {
				wantSent = 1
			}
			if len(sent) != wantSent {
				t.Fatalf("Sent() has %d frames, want %d", len(sent), wantSent)
			}
			if !noAck {
				ack, ok := sent[0].Msg.(wsproto.ConnectionAck)
				if !ok || ack.ServerID != c.ServerID() || ack.ClientID != c.ID() || sent[0].Dir != ToNode {
					t.Errorf("Sent()[0] = %+v", sent[0])
				}
			}
		})
	}
}
