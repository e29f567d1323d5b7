package control

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

// startConsole serves h's console on a free loopback port, with its
// control socket.
func startConsole(t *testing.T, h *testDaemon, idle time.Duration) (*Console, *controlapi.ControlClient) {
	t.Helper()
	srv, c := h.serve(t, "")
	con, err := ListenConsole(srv, config.ConsoleConfig{Listen: "127.0.0.1:0", IdleTimeout: config.Duration(idle)}, h.log)
	if err != nil {
		t.Fatalf("ListenConsole: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		con.Close(ctx)
	})
	return con, c
}

// consoleBrowser is an HTTP client that keeps cookies and does not follow
// redirects, like a browser as far as the console can tell.
func consoleBrowser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

func consoleReq(t *testing.T, hc *http.Client, method, u string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func login(t *testing.T, h *testDaemon, c *controlapi.ControlClient, hc *http.Client) string {
	t.Helper()
	lr, err := c.ConsoleLogin(h.ctx)
	if err != nil {
		t.Fatalf("ConsoleLogin: %v", err)
	}
	code, body := consoleReq(t, hc, http.MethodGet, lr.URL, nil)
	if code != http.StatusSeeOther {
		t.Fatalf("login: %d %s", code, body)
	}
	u, _ := url.Parse(lr.URL)
	return "http://" + u.Host
}

func TestConsoleLoginAndChecks(t *testing.T) {
	h := startFake(t)
	con, c := startConsole(t, h, time.Hour)
	base := "http://" + con.Addr()
	origin := map[string]string{"Origin": base}

	// No session: the API is refused, the page itself is served.
	hc := consoleBrowser(t)
	if code, body := consoleReq(t, hc, http.MethodGet, base+"/v1/status", nil); code != http.StatusUnauthorized {
		t.Errorf("status without a session = %d %s", code, body)
	}
	if code, _ := consoleReq(t, hc, http.MethodGet, base+"/", nil); code != http.StatusOK {
		t.Errorf("page = %d", code)
	}
	// Wrong and missing tokens.
	for _, q := range []string{"", "?token=", "?token=AAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		if code, _ := consoleReq(t, hc, http.MethodGet, base+"/login"+q, nil); code != http.StatusUnauthorized {
			t.Errorf("login%s = %d, want 401", q, code)
		}
	}
	if code, _ := consoleReq(t, hc, http.MethodGet, base+"/v1/status", nil); code != http.StatusUnauthorized {
		t.Errorf("a refused login gave a session: %d", code)
	}

	// The right token logs in once; a second use is refused.
	lr, err := c.ConsoleLogin(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := consoleReq(t, hc, http.MethodGet, lr.URL, nil); code != http.StatusSeeOther {
		t.Fatalf("login = %d %s", code, body)
	}
	if code, _ := consoleReq(t, consoleBrowser(t), http.MethodGet, lr.URL, nil); code != http.StatusUnauthorized {
		t.Errorf("second use of a token = %d, want 401", code)
	}
	code, body := consoleReq(t, hc, http.MethodGet, base+"/v1/status", nil)
	var st controlapi.StatusResponse
	if code != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil || st.Name != "fake" {
		t.Fatalf("status with a session = %d %s", code, body)
	}
	// Changes are the owner's; the session is.
	if code, body := consoleReq(t, hc, http.MethodPost, base+"/v1/reconnect", origin); code != http.StatusOK {
		t.Errorf("reconnect with a session = %d %s", code, body)
	}
	// Foreign Origin, a POST without one, and cross-site fetches.
	for _, hdr := range []map[string]string{
		{"Origin": "http://evil.example"},
		{"Origin": "http://127.0.0.1:1"},
		{},
		{"Origin": base, "Sec-Fetch-Site": "cross-site"},
	} {
		if code, body := consoleReq(t, hc, http.MethodPost, base+"/v1/reconnect", hdr); code != http.StatusForbidden {
			t.Errorf("POST with %v = %d %s, want 403", hdr, code, body)
		}
	}
	if code, _ := consoleReq(t, hc, http.MethodGet, base+"/v1/status", map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden {
		t.Errorf("GET from a foreign origin = %d, want 403", code)
	}
	// A foreign Host (DNS rebinding: evil.example resolving to 127.0.0.1).
	for _, host := range []string{"evil.example", "evil.example:" + strings.Split(con.Addr(), ":")[1], "127.0.0.1"} {
		if code, _ := consoleReq(t, hc, http.MethodGet, base+"/v1/status", map[string]string{"Host": host}); code != http.StatusMisdirectedRequest {
			t.Errorf("Host %s = %d, want 421", host, code)
		}
	}
	// localhost:PORT is the same console (a browser keeps its cookies
	// apart from 127.0.0.1's; this client is given the session's).
	lh := "localhost:" + strings.Split(con.Addr(), ":")[1]
	u, _ := url.Parse(base)
	ck := hc.Jar.Cookies(u)
	if len(ck) != 1 {
		t.Fatalf("cookies after login: %v", ck)
	}
	if code, body := consoleReq(t, hc, http.MethodGet, base+"/v1/status", map[string]string{"Host": lh, "Cookie": ck[0].String()}); code != http.StatusOK {
		t.Errorf("Host %s = %d %s, want 200", lh, code, body)
	}
	// Minting stays on the control socket.
	if code, _ := consoleReq(t, hc, http.MethodPost, base+"/v1/console/login", origin); code != http.StatusForbidden {
		t.Errorf("minting through the console = %d, want 403", code)
	}
	for _, want := range []string{"X-Frame-Options", "Content-Security-Policy"} {
		res, err := hc.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.Header.Get(want) == "" {
			t.Errorf("the page has no %s header", want)
		}
	}
}

func TestConsoleExpiry(t *testing.T) {
	h := startFake(t)
	con, c := startConsole(t, h, time.Minute)
	t0 := time.Now()
	now := t0
	con.mu.Lock()
	con.now = func() time.Time { return now }
	con.mu.Unlock()
	setNow := func(d time.Duration) { con.mu.Lock(); now = t0.Add(d); con.mu.Unlock() }

	// A token unused for longer than its TTL is refused.
	lr, err := c.ConsoleLogin(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	setNow(ConsoleLoginTTL + time.Second)
	hc := consoleBrowser(t)
	if code, _ := consoleReq(t, hc, http.MethodGet, lr.URL, nil); code != http.StatusUnauthorized {
		t.Errorf("expired token = %d, want 401", code)
	}
	// A session is kept alive by use, not by the page's polling, and ends
	// after the idle time.
	setNow(time.Hour)
	base := login(t, h, c, hc)
	setNow(time.Hour + 50*time.Second)
	if code, _ := consoleReq(t, hc, http.MethodGet, base+"/v1/status", nil); code != http.StatusOK {
		t.Fatalf("status within the idle time = %d", code)
	}
	setNow(time.Hour + 100*time.Second)
	if code, _ := consoleReq(t, hc, http.MethodGet, base+"/v1/status", map[string]string{controlapi.ConsolePollHeader: "1"}); code != http.StatusOK {
		t.Fatalf("poll within the idle time since use = %d", code)
	}
	setNow(time.Hour + 200*time.Second)
	if code, _ := consoleReq(t, hc, http.MethodGet, base+"/v1/status", map[string]string{controlapi.ConsolePollHeader: "1"}); code != http.StatusUnauthorized {
		t.Errorf("poll after the idle time = %d, want 401", code)
	}
	if code, _ := consoleReq(t, hc, http.MethodGet, base+"/v1/status", nil); code != http.StatusUnauthorized {
		t.Errorf("an idle session came back: %d", code)
	}
}

func TestConsoleOffAndListen(t *testing.T) {
	h := startFake(t)
	srv, c := h.serve(t, "")
	_, err := c.ConsoleLogin(h.ctx)
	var apiErr *controlapi.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || !strings.Contains(apiErr.Message, "[console] listen") {
		t.Errorf("login without a console = %v, want 409 saying how to enable it", err)
	}
	for _, l := range []string{"0.0.0.0:0", ":0", "192.0.2.1:7465", "example.com:7465", "127.0.0.1"} {
		if con, err := ListenConsole(srv, config.ConsoleConfig{Listen: l}, h.log); err == nil {
			con.Close(context.Background())
			t.Errorf("ListenConsole(%q) listened", l)
		}
		cfg := config.Default()
		cfg.Hub.Key = "k"
		cfg.Console.Listen = l
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "console.listen") {
			t.Errorf("config check of listen %q = %v", l, err)
		}
	}
}
