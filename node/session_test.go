package node

// The session as the node composes it: which tools it registers and
// serves, and its file rules. The engine's own tests are in hubsession.

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/files"
	"github.com/vcpnode/vcpnode/wsproto"
)

func toolNames(t *testing.T, rt wsproto.RegisterTools) []string {
	t.Helper()
	var names []string
	for _, raw := range rt.Tools {
		var m struct{ Name string }
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("manifest %s: %v", raw, err)
		}
		names = append(names, m.Name)
	}
	return names
}

func TestConnectSendsFullState(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()

	msg, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	rt := msg.(wsproto.RegisterTools)
	if rt.ServerName != "test-node" || !rt.Capabilities.CancelTool {
		t.Errorf("register_tools = serverName %q, cancelTool %v", rt.ServerName, rt.Capabilities.CancelTool)
	}
	// Echo is named in exposed_tools; NodeInfo is a built-in nobody named;
	// internal_request_file is called by the server without registration.
	if got := toolNames(t, rt); !slices.Equal(got, []string{"Echo"}) {
		t.Errorf("registered tools = %v, want [Echo]", got)
	}
	for _, raw := range rt.Tools {
		for _, banned := range []string{`"static"`, "basePath", "[云端]", "config"} {
			if strings.Contains(string(raw), banned) {
				t.Errorf("manifest carries %s: %s", banned, raw)
			}
		}
		if !strings.Contains(string(raw), `"entryPoint":{"type":"remote"}`) {
			t.Errorf("manifest without a remote entryPoint: %s", raw)
		}
	}

	msg, err = c.WaitType(h.ctx, wsproto.TypeReportIP)
	if err != nil {
		t.Fatal(err)
	}
	ip := msg.(wsproto.ReportIP)
	if !slices.Equal(ip.LocalIPs, []string{"192.0.2.10"}) || ip.PublicIP != "203.0.113.7" || ip.ServerName != "test-node" {
		t.Errorf("report_ip = %+v", ip)
	}

	s := h.waitState("connected with the ack's serverId", func(s ConnState) bool {
		return s.Phase == PhaseConnected && s.ServerID == c.ServerID()
	})
	if s.Sessions != 1 {
		t.Errorf("sessions = %d, want 1", s.Sessions)
	}
}

func TestExecuteToolResults(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()

	res := h.call(c, "Echo", map[string]any{"text": "hello", "list": []string{"a", "b"}})
	if res.Status != wsproto.StatusSuccess || !strings.Contains(firstText(t, res), "hello") {
		t.Fatalf("Echo = %+v", res)
	}

	unknown := h.call(c, "NoSuchTool", nil)
	hidden := h.call(c, "NodeInfo", nil) // registered, but not exposed
	if unknown.Status != wsproto.StatusError || hidden.Status != wsproto.StatusError {
		t.Fatalf("unknown = %+v, hidden = %+v", unknown, hidden)
	}
	// A hidden tool must be indistinguishable from a missing one.
	if strings.ReplaceAll(hidden.Error, "NodeInfo", "X") != strings.ReplaceAll(unknown.Error, "NoSuchTool", "X") {
		t.Errorf("hidden and unknown differ:\n%q\n%q", hidden.Error, unknown.Error)
	}
}

func TestResultCapAndFileServing(t *testing.T) {
	root := t.TempDir()
	// Bigger than max_result_bytes: files are bounded by files.max_bytes instead.
	content := []byte(strings.Repeat("vcpnode file ", 1000))
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.env"), []byte("SECRET=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Node.MaxResultBytes = 4 * config.KiB
		c.Node.Oversize = "error"
		c.Files.Roots = []string{root}
	}})
	c := h.accept()

	big := h.call(c, "Echo", map[string]any{"text": strings.Repeat("y", 8*config.KiB)})
	if big.Status != wsproto.StatusError || !strings.Contains(big.Error, "max_result_bytes") {
		t.Errorf("oversized result = %.200s", big.Error)
	}

	fileURL := (&url.URL{Scheme: "file", Path: filepath.Join(root, "notes.txt")}).String()
	res := h.call(c, files.ToolName, map[string]any{"fileUrl": fileURL})
	var body struct{ Status, FileData, MimeType string }
	if res.Status != wsproto.StatusSuccess || json.Unmarshal(res.Result, &body) != nil {
		t.Fatalf("file request = %+v", res)
	}
	data, err := base64.StdEncoding.DecodeString(body.FileData)
	if body.Status != "success" || err != nil || string(data) != string(content) || !strings.HasPrefix(body.MimeType, "text/plain") {
		t.Errorf("file result: status %q mime %q, %d bytes (%v)", body.Status, body.MimeType, len(data), err)
	}

	for _, u := range []string{"file:///etc/passwd", "file://" + filepath.Join(root, "config.env"), "file:///C:/Users/me/cat.png"} {
		if res := h.call(c, files.ToolName, map[string]any{"fileUrl": u}); res.Status != wsproto.StatusError {
			t.Errorf("%s served: %.100s", u, res.Result)
		}
	}
}

func TestFileServingDisabledWithoutRoots(t *testing.T) {
	h := startHarness(t, harnessOpt{})
	c := h.accept()
	res := h.call(c, files.ToolName, map[string]any{"fileUrl": "file:///etc/hostname"})
	if res.Status != wsproto.StatusError || !strings.Contains(res.Error, "disabled") {
		t.Fatalf("file request without roots = %+v", res)
	}
}
