package control

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
)

// A timeout override reaches the daemon only when it passes the config's
// own [tools.NAME] timeout check (or is "default"); anything else is a 400
// that names the rule, and the daemon is not asked.
func TestToolOverrideTimeoutChecked(t *testing.T) {
	h := startFake(t)
	_, c := h.serve(t, "")
	var api *controlapi.APIError
	for _, tc := range []struct {
		timeout string
		status  int
		want    string
	}{
		{"45s", http.StatusOK, ""},
		{"default", http.StatusOK, ""},
		{"-5s", http.StatusBadRequest, "must be between 1s and"},
		{"0s", http.StatusBadRequest, "must be between 1s and"},
		{"500ms", http.StatusBadRequest, "must be between 1s and"},
		{"999h", http.StatusBadRequest, "must be between 1s and"},
		{"9999999h", http.StatusBadRequest, "invalid duration"},
		{"soon", http.StatusBadRequest, `"default" for the config's value`},
	} {
		before := len(h.b.overrides)
		var res controlapi.ToolOverrideResponse
		err := c.Do(h.ctx, http.MethodPost, "/v1/tools/Echo/override", controlapi.ToolOverrideRequest{Timeout: tc.timeout}, &res)
		h.b.mu.Lock()
		asked := h.b.overrides[before:]
		h.b.mu.Unlock()
		if tc.status == http.StatusOK {
			if err != nil || res.Tool != "Echo" || len(asked) != 1 || asked[0] != "Echo "+tc.timeout {
				t.Errorf("timeout %q = %+v, %v; daemon asked %q", tc.timeout, res, err, asked)
			}
			continue
		}
		if !errors.As(err, &api) || api.Status != tc.status || !strings.Contains(api.Message, tc.want) {
			t.Errorf("timeout %q = %v, want %d with %q", tc.timeout, err, tc.status, tc.want)
		}
		if len(asked) != 0 {
			t.Errorf("timeout %q reached the daemon: %q", tc.timeout, asked)
		}
	}
	if err := c.Do(h.ctx, http.MethodPost, "/v1/tools/Nope/override", controlapi.ToolOverrideRequest{Timeout: "45s"}, nil); !errors.As(err, &api) || api.Status != http.StatusNotFound {
		t.Errorf("timeout of an unknown tool = %v, want 404", err)
	}
}

// The console's switches and its register button go through the same
// handlers, with the console's session and Origin checks in front.
func TestConsoleOverrideAndRegisterNeedOrigin(t *testing.T) {
	h := startFake(t)
	con, c := startConsole(t, h, time.Hour)
	hc := consoleBrowser(t)
	base := login(t, h, c, hc)
	post := func(path, body string, hdr map[string]string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	origin := map[string]string{"Origin": "http://" + con.Addr(), "Content-Type": "application/json"}
	for _, hdr := range []map[string]string{{}, {"Origin": "http://evil.example"}} {
		if code, body := post("/v1/tools/Echo/override", `{"timeout":"45s"}`, hdr); code != http.StatusForbidden {
			t.Errorf("override with %v = %d %s, want 403", hdr, code, body)
		}
		if code, body := post(controlapi.PathRegister, `{}`, hdr); code != http.StatusForbidden {
			t.Errorf("register with %v = %d %s, want 403", hdr, code, body)
		}
	}
	h.b.mu.Lock()
	asked, registers := len(h.b.overrides), h.b.registers
	h.b.mu.Unlock()
	if asked != 0 || registers != 0 {
		t.Fatalf("refused requests reached the daemon: %d overrides, %d registers", asked, registers)
	}
	code, body := post("/v1/tools/Echo/override", `{"timeout":"-1s"}`, origin)
	var e controlapi.ErrorResponse
	if code != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, "must be between 1s and") {
		t.Errorf("negative timeout through the console = %d %s", code, body)
	}
	if code, body := post("/v1/tools/Echo/override", `{"timeout":"45s"}`, origin); code != http.StatusOK {
		t.Errorf("override through the console = %d %s", code, body)
	}
	if code, body := post(controlapi.PathRegister, `{}`, origin); code != http.StatusOK || !strings.Contains(body, `"registering":true`) {
		t.Errorf("register through the console = %d %s", code, body)
	}
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if len(h.b.overrides) != 1 || h.b.overrides[0] != "Echo 45s" || h.b.registers != 1 {
		t.Errorf("daemon asked %q and registered %d times", h.b.overrides, h.b.registers)
	}
}
