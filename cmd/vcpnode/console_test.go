package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
)

func TestConsoleCommand(t *testing.T) {
	off := startDaemon(t, "")
	code, out, errOut := off.ctl("console", "--no-open")
	if code != exitError || out != "" || !strings.Contains(errOut, `set [console] listen = "127.0.0.1:7465"`) {
		t.Errorf("console without [console] listen: exit %d, %q, %q", code, out, errOut)
	}

	d := startDaemon(t, "\n[console]\nlisten = \"127.0.0.1:0\"\n")
	var opened []string
	ta := newTestApp(t)
	ta.app.openURL = func(u string) error { opened = append(opened, u); return nil }
	if code := ta.run("console", "--socket", d.socket); code != exitOK {
		t.Fatalf("console: exit %d: %s", code, ta.stderr)
	}
	lines := strings.Split(strings.TrimSpace(ta.stdout.String()), "\n")
	url := lines[len(lines)-1]
	if !strings.HasPrefix(url, "http://"+d.console.Addr()+"/login?token=") || len(opened) != 1 || opened[0] != url {
		t.Fatalf("console printed %q and opened %v", ta.stdout, opened)
	}
	// The URL logs a browser in (once).
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, want := range []int{http.StatusSeeOther, http.StatusUnauthorized} {
		res, err := hc.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("use %d of the URL = %d, want %d", i+1, res.StatusCode, want)
		}
		if ck := res.Header.Get("Set-Cookie"); i == 0 && (!strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict")) {
			t.Errorf("session cookie %q is not HttpOnly and SameSite=Strict", ck)
		}
	}
	var lr controlapi.ConsoleLoginResponse
	d.ctlJSON(&lr, "console", "--no-open")
	if !strings.Contains(lr.URL, "/login?token=") || lr.URL == url || lr.Expires.IsZero() {
		t.Errorf("console --json = %+v", lr)
	}
}

// config show applies the console's tool switches and names their file.
func TestConfigShowReportsToolSwitches(t *testing.T) {
	state := t.TempDir()
	path := writeFile(t, "config.toml", "[hub]\nkey = \"k\"\n\n[plugins]\nstate_dir = \""+state+"\"\n\n[tools.Echo]\ntimeout = \"30s\"\n", 0o600)
	off := false
	ov := config.Overrides{}
	if err := ov.Set("Echo", config.ToolOverride{Expose: &off, Approval: "ask"}); err != nil {
		t.Fatal(err)
	}
	if err := ov.Save(filepath.Join(state, config.OverridesFile)); err != nil {
		t.Fatal(err)
	}
	ta := newTestApp(t)
	if code := ta.run("config", "show", "-c", path); code != exitOK {
		t.Fatalf("config show: exit %d: %s", code, ta.stderr)
	}
	out := ta.stdout.String()
	for _, want := range []string{
		"# tool switches from " + filepath.Join(state, config.OverridesFile) + " (set in the web console), applied over the file:",
		`#   [tools.Echo] expose = false, approval = "ask"`,
		"expose = false", "approval = 'ask'", "timeout = '30s'",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config show lacks %q:\n%s", want, out)
		}
	}
}
