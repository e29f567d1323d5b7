package node

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/wsproto"
)

// harnessConfigFile writes the harness's config as a file, plus extra TOML.
func harnessConfigFile(t *testing.T, h *harness, path, extra string) {
	t.Helper()
	doc := fmt.Sprintf(`[hub]
url = %q
key = %q
name = "test-node"
public_ip = "203.0.113.7"

[node]
exposed_tools = ["Echo", "Gate"]
repeat_limit = 0
%s`, h.cfg.Hub.URL, testKey, extra)
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReloadOverTheControlSocket(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	first := h.accept()
	if _, err := first.WaitType(h.ctx, wsproto.TypeReportIP); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	harnessConfigFile(t, h, path, "")
	_, client := startControl(t, h, path)

	rep, err := client.Reload(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ConfigFile != path || len(rep.Changed) != 0 || rep.Reconnected {
		t.Errorf("reload of the same config = %+v", rep)
	}

	harnessConfigFile(t, h, path, `hidden_tools = ["NodeInfo"]
max_concurrent = 4

[audit]
file = "`+filepath.Join(t.TempDir(), "audit.jsonl")+`"

[metrics]
listen = "127.0.0.1:9464"
`)
	rep, err = client.Reload(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"node", "audit", "metrics"} {
		if !slices.Contains(rep.Changed, s) {
			t.Errorf("changed = %v, lacks %s", rep.Changed, s)
		}
	}
	if !slices.Contains(rep.RestartNeeded, "metrics") || !strings.Contains(strings.Join(rep.RestartNeeded, " "), "node.max_concurrent") {
		t.Errorf("restart needed = %v", rep.RestartNeeded)
	}
	if got := h.node.Config().Node.HiddenTools; !slices.Equal(got, []string{"NodeInfo"}) {
		t.Errorf("hidden tools after reload = %v", got)
	}

	harnessConfigFile(t, h, path, "max_concurrent = 0\n")
	_, err = client.Reload(h.ctx)
	var api *controlapi.APIError
	if !errors.As(err, &api) || api.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(api.Message, "the old one stays in force") || !strings.Contains(api.Message, "node.max_concurrent: must be at least 1") {
		t.Fatalf("reload of a bad config = %v", err)
	}
	if got := h.node.Config().Node.MaxConcurrent; got != 4 {
		t.Errorf("max_concurrent after a failed reload = %d, want 4 (kept)", got)
	}
	if strings.Contains(api.Message, testKey) {
		t.Errorf("the reload error shows the key: %s", api.Message)
	}
}

func TestReloadFileRefusesAnUnwritableAuditFile(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	path := filepath.Join(t.TempDir(), "config.toml")
	harnessConfigFile(t, h, path, "\n[audit]\nfile = \""+filepath.Join(t.TempDir(), "no", "such", "dir.jsonl")+"\"\n")
	if _, err := h.node.ReloadFile(path); err == nil || !strings.Contains(err.Error(), "audit.file") {
		t.Fatalf("ReloadFile = %v, want an audit.file error", err)
	}
	if h.node.Config().Audit.File != "" {
		t.Error("the audit file changed although the reload failed")
	}
	if _, err := h.node.ReloadFile(path + ".missing"); err == nil || !strings.Contains(err.Error(), "read config") {
		t.Fatalf("ReloadFile(missing) = %v", err)
	}
}
