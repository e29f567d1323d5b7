package control

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The Server tools page's endpoints (the list, a refresh, and a run of a
// server tool through /v1/call) take the console's checks: a session, this
// console's Host, and its Origin; a cross-site fetch is refused.
func TestConsoleServerToolsEndpointsChecked(t *testing.T) {
	h := startFake(t)
	con, c := startConsole(t, h, time.Hour)
	base := "http://" + con.Addr()
	paths := []struct{ method, path string }{
		{http.MethodGet, "/v1/server/tools"},
		{http.MethodGet, "/v1/server/tools?refresh=1"},
		{http.MethodPost, "/v1/call"},
	}
	hc := consoleBrowser(t)
	for _, p := range paths {
		if code, body := consoleReq(t, hc, p.method, base+p.path, map[string]string{"Origin": base}); code != http.StatusUnauthorized {
			t.Errorf("%s %s without a session = %d %s, want 401", p.method, p.path, code, body)
		}
	}
	login(t, h, c, hc)
	u, _ := url.Parse(base)
	for _, p := range paths {
		for _, hdr := range []map[string]string{
			{"Origin": "http://evil.example"},
			{"Origin": "http://127.0.0.1:1"},
			{"Origin": base, "Sec-Fetch-Site": "cross-site"},
		} {
			if code, body := consoleReq(t, hc, p.method, base+p.path, hdr); code != http.StatusForbidden {
				t.Errorf("%s %s with %v = %d %s, want 403", p.method, p.path, hdr, code, body)
			}
		}
		if code, _ := consoleReq(t, hc, p.method, base+p.path, map[string]string{"Origin": base, "Host": "evil.example:" + u.Port()}); code != http.StatusMisdirectedRequest {
			t.Errorf("%s %s with a foreign Host = %d, want 421", p.method, p.path, code)
		}
	}
	// With the session and this console's Origin they reach the daemon.
	if code, body := consoleReq(t, hc, http.MethodGet, base+"/v1/server/tools", map[string]string{"Origin": base}); code != http.StatusOK || !strings.Contains(body, `"state":"none"`) {
		t.Errorf("GET /v1/server/tools = %d %s", code, body)
	}
	if code, body := consoleReq(t, hc, http.MethodPost, base+"/v1/call", map[string]string{"Origin": base}); code != http.StatusBadRequest || !strings.Contains(body, "no tool named") {
		t.Errorf("POST /v1/call (no tool) = %d %s, want the handler's 400", code, body)
	}
}
