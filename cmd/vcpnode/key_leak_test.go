package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testnet"
	"github.com/vcpnode/vcpnode/wsproto"
)

// TestKeyEchoedByTheServerNeverShows runs the real daemon against a hub that
// echoes the key back in everything it sends (the serverId of an ack, tool
// names, request ids, a file URL, a close reason), then reads every channel
// the daemon writes to: its log, `status`, `status --json`, the audit file
// and the metrics. Each channel is first checked to carry what the hub sent,
// so that a channel that shows nothing cannot pass.
func TestKeyEchoedByTheServerNeverShows(t *testing.T) {
	const key = ctlTestKey
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hub, err := demohub.Start(demohub.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	dir := t.TempDir()
	root := filepath.Join(dir, "files")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, "audit.jsonl")
	sock := testnet.SocketPath(t)
	path := writeFile(t, "config.toml", testHubConfig(hub, "\n[files]\nroots = [\""+root+"\"]\n\n[audit]\nfile = \""+audit+
		"\"\n\n[metrics]\nlisten = \"127.0.0.1:0\"\n\n[plugins]\nstate_dir = \""+filepath.Join(dir, "state")+"\"\n"), 0o600)

	ta := newTestApp(t)
	ta.newNode = newApp().newNode // the real node
	exit := startRun(ta, "--config", path, "--socket", sock, "--log-format", "json", "--log-level", "debug")
	stopped := false
	defer func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", ta.stderr)
		}
		if !stopped {
			ta.sigs <- syscall.SIGTERM
			waitExit(t, exit)
		}
	}()
	c, err := hub.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := pollStatus(t, ctx, sock, "connected with metrics", func(s controlapi.StatusResponse) bool {
		return s.Connection.Phase == controlapi.PhaseConnected && s.Metrics != "" && s.Connection.ServerID != ""
	})

	// The key in a serverId, a tool name, a request id and a file URL.
	if err := c.Send(ctx, wsproto.ConnectionAck{ServerID: "dist-" + key, ClientID: key}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallExecute(ctx, wsproto.ExecuteTool{RequestID: "req-" + key, ToolName: "Tool" + key, ToolArgs: map[string]json.RawMessage{}}); err != nil {
		t.Fatal(err)
	}
	fileURL, _ := json.Marshal("file://" + root + "/" + key + ".txt")
	res, err := c.CallExecute(ctx, wsproto.ExecuteTool{RequestID: "file-1", ToolName: "internal_request_file",
		ToolArgs: map[string]json.RawMessage{"fileUrl": fileURL}})
	if err != nil || res.Status != wsproto.StatusError {
		t.Fatalf("file call = %+v, %v; want an error", res, err)
	}
	st = pollStatus(t, ctx, sock, "the echoed serverId", func(s controlapi.StatusResponse) bool {
		return strings.HasPrefix(s.Connection.ServerID, "dist-") && s.Connection.ServerID != st.Connection.ServerID
	})
	connected := statusOutputs(t, sock)

	// The key in a close reason, kept as the last error. The node may
	// reconnect meanwhile (the last error stays), but no later failure may
	// replace it: refused handshakes would, 100 ms later, and the status
	// reads below could come after that on a loaded machine.
	c.CloseWith(4000, "bye "+key+" VCP_Key="+key)
	pollStatus(t, ctx, sock, "the close reason as last error", func(s controlapi.StatusResponse) bool {
		return strings.Contains(s.Connection.LastError, "4000")
	})
	afterClose := statusOutputs(t, sock)

	resp, err := http.Get("http://" + st.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	auditLines, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	ta.sigs <- syscall.SIGTERM
	stopped = true
	if code := waitExit(t, exit); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, ta.stderr)
	}

	channels := []struct {
		name, text string
		carries    []string // proof that the channel shows what the hub sent
	}{
		{"log", ta.stderr.String(), []string{`"server_id":"dist-REDACTED"`, "ToolREDACTED", "req-REDACTED", "REDACTED.txt", "bye REDACTED VCP_Key=REDACTED"}},
		{"status", connected.text, []string{"dist-REDACTED"}},
		{"status --json", connected.json, []string{`"serverId": "dist-REDACTED"`}},
		{"status after the close", afterClose.text, []string{"bye REDACTED VCP_Key=REDACTED"}},
		{"status --json after the close", afterClose.json, []string{"bye REDACTED VCP_Key=REDACTED"}},
		{"audit file", string(auditLines), []string{`"tool":"ToolREDACTED"`, `"requestId":"req-REDACTED"`, "REDACTED.txt"}},
		{"metrics", string(metrics), []string{`vcpnode_calls_total{outcome="unknown_tool",tool="(unknown)"} 1`}},
	}
	for _, ch := range channels {
		if strings.Contains(ch.text, key) {
			t.Errorf("the key shows in the %s:\n%s", ch.name, ch.text)
		}
		for _, want := range ch.carries {
			if !strings.Contains(ch.text, want) {
				t.Errorf("the %s lacks %q (so the test would prove nothing):\n%s", ch.name, want, ch.text)
			}
		}
	}
}

type statusOutput struct{ text, json string }

// statusOutputs runs `vcpnode status` and `vcpnode status --json` against sock.
func statusOutputs(t *testing.T, sock string) statusOutput {
	t.Helper()
	var out statusOutput
	for _, asJSON := range []bool{false, true} {
		ta := newTestApp(t)
		args := []string{"status", "--socket", sock}
		if asJSON {
			args = append(args, "--json")
		}
		if code := ta.run(args...); code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, ta.stdout, ta.stderr)
		}
		if asJSON {
			out.json = ta.stdout.String() + ta.stderr.String()
		} else {
			out.text = ta.stdout.String() + ta.stderr.String()
		}
	}
	return out
}
