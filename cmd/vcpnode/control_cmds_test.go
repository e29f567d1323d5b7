package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/testnet"
	"github.com/vcpnode/vcpnode/wsproto"
)

func TestStatusCommand(t *testing.T) {
	d := startDaemon(t, "")
	conn := d.accept()
	code, out, errOut := d.ctl("status")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantLines(t, out,
		"hub "+d.node.HubURL(),
		"server id "+conn.ServerID(),
		"node name laptop",
		"sessions 1 (0 reconnects)",
		"tools 1 exposed, 5 not exposed, 0 unsupported, 0 invalid (vcpnode tools --all)", // internal_request_file is never registered
		"placeholders 0 (vcpnode placeholders)",
		"approvals none pending",
		"config "+d.configFile(),
		"socket "+d.socket,
		"in flight 0",
	)
	for _, prefix := range []string{"vcpnode v0.9.0-test, pid ", "connection connected for "} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), prefix) {
			t.Errorf("output lacks %q:\n%s", prefix, out)
		}
	}

	var st controlapi.StatusResponse
	d.ctlJSON(&st, "status")
	if st.Connection.Phase != controlapi.PhaseConnected || st.Connection.ServerID != conn.ServerID() || st.Tools.Exposed != 1 || !st.Connection.Registered {
		t.Errorf("status --json = %+v", st)
	}
}

func TestStatusShowsCallsAndBackoff(t *testing.T) {
	d := startDaemon(t, "[tools.Echo]\napproval = \"ask\"\n")
	conn := d.accept()
	pending := d.callAsync(conn, "Echo", map[string]any{"message": "hi"})
	d.waitPending(1)
	_, out, _ := d.ctl("status")
	wantLines(t, out, "approvals 1 pending (vcpnode approvals)", "in flight 1", "TOOL REQUEST STATE AGE DEADLINE IN")
	if !strings.Contains(out, "awaiting_approval") {
		t.Errorf("the held call is not shown:\n%s", out)
	}
	if code, _, errOut := d.ctl("deny", "1"); code != exitOK {
		t.Fatalf("deny: %s", errOut)
	}
	d.result(pending)

	// The hub goes away: status says so, with the error and the next
	// attempt. The node retries within a second, so poll until a status
	// lands in a backoff wait.
	d.hub.RefuseHandshakes(-1)
	conn.Drop()
	for {
		_, out, _ = d.ctl("status")
		squeezed := strings.Join(strings.Fields(out), " ")
		if strings.Contains(squeezed, "connection disconnected for") {
			for _, want := range []string{"next attempt in", "last error "} {
				if !strings.Contains(squeezed, want) {
					t.Errorf("backoff status lacks %q:\n%s", want, out)
				}
			}
			return
		}
		select {
		case <-d.ctx.Done():
			t.Fatalf("status never showed a backoff:\n%s", out)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestToolsCommand(t *testing.T) {
	d := startDaemon(t, "[tools.Echo]\napproval = \"ask\"\ntimeout = \"5m\"\nmax_concurrent = 2\n")
	tests := []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"tools"}, []string{
			"NAME EXPOSED TIMEOUT MAX APPROVAL SOURCE",
			"Echo yes 5m 2 ask (2m) builtin",
			"internal_request_file by name 1m - auto builtin",
			"5 more not exposed; vcpnode tools --all lists them and why",
		}, "NodeInfo"},
		{[]string{"tools", "--all"}, []string{
			"NAME EXPOSED TIMEOUT MAX APPROVAL SOURCE WHY",
			"Echo yes 5m 2 ask (2m) builtin built-in tool named in exposed_tools",
			"NodeInfo no 10s - auto builtin built-in tools are exposed only when the config names them (exposed_tools or [tools.NodeInfo] expose = true)",
			"DirectoryTree no 30s - auto builtin built-in tools are exposed only when the config names them (exposed_tools or [tools.DirectoryTree] expose = true)",
			"WriteFile no 2m30s - ask (2m) builtin built-in tools are exposed only when the config names them (exposed_tools or [tools.WriteFile] expose = true)",
		}, "more not exposed"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := d.ctl(tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			wantLines(t, out, tt.want...)
			if strings.Contains(out, tt.not) {
				t.Errorf("output has %q:\n%s", tt.not, out)
			}
		})
	}
	var resp controlapi.ToolsResponse
	d.ctlJSON(&resp, "tools")
	// Echo, NodeInfo, internal_request_file and the four workspace built-ins.
	if len(resp.Tools) != 7 || resp.Tools[1].Name != "Echo" || resp.Tools[1].ApprovalTimeoutMs != 120000 {
		t.Errorf("tools --json = %+v", resp.Tools)
	}
}

// TestToolsListsSkippedPlugins: plugin folders that run as no tool are
// listed with --all, each with why, and counted by status.
func TestToolsListsSkippedPlugins(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Plugin")
	manifests := map[string]string{
		"Good":      `{"name":"Good","pluginType":"synchronous","entryPoint":{"command":"echo {}"},"communication":{"protocol":"stdio","timeout":5000}}`,
		"Direct":    `{"name":"Direct","pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}}`,
		"NoType":    `{"name":"NoType","entryPoint":{"command":"echo {}"}}`,
		"Announcer": `{"name":"Announcer","pluginType":"static","entryPoint":{"command":"echo hi"},"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{Hi}}"}]}}`,
	}
	for folder, m := range manifests {
		if err := os.MkdirAll(filepath.Join(dir, folder), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, folder, "plugin-manifest.json"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := startDaemon(t, fmt.Sprintf("[plugins]\ndirs = [%q]\nstate_dir = %q\nwatch = false\n", dir, t.TempDir()))
	code, out, errOut := d.ctl("tools", "--all")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	squeezed := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Good no 5s", "Direct unsupported", "(NoType) invalid", "Announcer static"} {
		if !strings.Contains(squeezed, want) {
			t.Errorf("tools --all lacks %q:\n%s", want, out)
		}
	}
	var st controlapi.StatusResponse
	d.ctlJSON(&st, "status")
	if st.Tools.Unsupported != 1 || st.Tools.Invalid != 1 {
		t.Errorf("status counts = %+v, want 1 unsupported and 1 invalid", st.Tools)
	}
	_, out, _ = d.ctl("tools")
	if strings.Contains(out, "Direct") || strings.Contains(out, "NoType") {
		t.Errorf("plain tools lists skipped plugins:\n%s", out)
	}
}

func TestCallCommand(t *testing.T) {
	d := startDaemon(t, "[tools.Echo]\napproval = \"deny\"\n") // the owner is never refused
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		stderr   string
		noStdout bool
	}{
		{"key=value", []string{"call", "Echo", "message=hello owner"}, exitOK, []string{`"type": "text",`, `message: hello owner`}, "local call of Echo (request local-", false},
		{"--args and key:=JSON", []string{"call", "Echo", "--args", `{"message": "from json", "n": 1}`, "n:=3"}, exitOK,
			[]string{"message: from json", "n: 3"}, "ok after", false},
		{"hidden tool", []string{"call", "NodeInfo"}, exitOK, []string{`"goVersion"`}, "", false},
		{"tool error", []string{"call", "Echo", "fail=boom"}, exitError, nil, "vcpnode: tool failed: Echo (error, request local-", true},
		{"unknown tool", []string{"call", "Nope"}, exitError, nil, `vcpnode: unknown tool "Nope"`, true},
		{"misspelt tool", []string{"call", "Ehco"}, exitError, nil, `vcpnode: unknown tool "Ehco" (did you mean "Echo"?)`, true},
		{"no tool", []string{"call"}, exitUsage, nil, "needs the name of a tool", true},
		{"not key=value", []string{"call", "Echo", "message"}, exitUsage, nil, `argument "message" is not key=value`, true},
		{"bad JSON value", []string{"call", "Echo", "n:=three"}, exitUsage, nil, "is not valid JSON; use n=three", true},
		{"bad --args", []string{"call", "Echo", "--args", "[1]"}, exitUsage, nil, "--args must be one JSON object", true},
		// --json is output everywhere; a JSON object given where an argument goes is pointed at --args.
		{"object as argument", []string{"call", "Echo", "--json", `{"message": "hi"}`}, exitUsage, nil, "pass it with --args", true},
		{"--json output", []string{"call", "Echo", "message=whole", "--json"}, exitOK, []string{`"outcome": "ok"`, `"requestId": "local-`, `message: whole`}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := d.ctl(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			text := out
			if !tt.noStdout {
				// stdout is the result JSON, nothing else.
				var v map[string]any
				if err := json.Unmarshal([]byte(out), &v); err != nil {
					t.Fatalf("stdout is not the result JSON: %v\n%s", err, out)
				}
				var parts struct{ Content []struct{ Text string } }
				json.Unmarshal([]byte(out), &parts)
				if _, whole := v["result"]; whole { // --json: the whole answer
					var res struct {
						Result struct{ Content []struct{ Text string } }
					}
					json.Unmarshal([]byte(out), &res)
					parts.Content = res.Result.Content
				}
				for _, p := range parts.Content {
					text += "\n" + p.Text
				}
			} else if out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(text, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, errOut)
			}
		})
	}
}

func TestReloadAndReconnectCommands(t *testing.T) {
	d := startDaemon(t, "")
	first := d.accept()
	path := d.configFile()

	code, out, _ := d.ctl("reload")
	if code != exitOK || out != "reloaded "+path+": nothing changed\n" {
		t.Errorf("reload = %d %q", code, out)
	}
	code, out, _ = d.ctl("reconnect")
	if code != exitOK || !strings.HasPrefix(out, "already connected to "+d.node.HubURL()+", server id "+first.ServerID()+"; tools registered") {
		t.Errorf("reconnect = %d %q", code, out)
	}

	rewrite := func(extra string) {
		if err := os.WriteFile(path, []byte(testHubConfig(d.hub, extra)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rewrite("[tools.Echo]\ntimeout = \"90s\"\n\n[log]\nlevel = \"debug\"\n")
	code, out, errOut := d.ctl("reload")
	if code != exitOK {
		t.Fatalf("reload: exit %d: %s", code, errOut)
	}
	wantLines(t, out, "reloaded "+path, "changed log, tools",
		"reconnected yes, so that the server sees the new tools and hub settings",
		"needs restart log (these keep their old values until vcpnode restarts)")
	<-first.Done() // the node closed it to re-register with the new timeout
	d.accept()

	rewrite("max_concurrent = 0\n")
	code, out, errOut = d.ctl("reload")
	if code != exitError || out != "" {
		t.Fatalf("reload of a bad config: exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"vcpnode: reload: config not applied, the old one stays in force:", ":8:1: node.max_concurrent: must be at least 1"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	var rep controlapi.ReloadResponse
	rewrite("")
	d.ctlJSON(&rep, "reload")
	if rep.ConfigFile != path || !rep.Reconnected || strings.Join(rep.Changed, ",") != "log,tools" {
		t.Errorf("reload --json = %+v", rep)
	}
}

func TestApprovalCommandsThroughTheHub(t *testing.T) {
	d := startDaemon(t, "[tools.Echo]\napproval = \"ask\"\ntimeout = \"5m\"\n")
	conn := d.accept()
	code, out, _ := d.ctl("approvals")
	if code != exitOK || out != "no calls are waiting for approval\n" {
		t.Errorf("approvals with none = %d %q", code, out)
	}

	first := d.callAsync(conn, "Echo", map[string]any{"message": "deploy to prod", "count": 3})
	d.waitPending(1)
	second := d.callAsync(conn, "Echo", map[string]any{"message": "second"})
	d.waitPending(2)
	code, out, _ = d.ctl("approvals")
	if code != exitOK {
		t.Fatalf("approvals: exit %d", code)
	}
	wantLines(t, out, "ID WHERE TOOL REQUEST WAITING REFUSED IN ARGUMENTS",
		"answer with: vcpnode approve ID, or vcpnode deny ID [--reason TEXT]")
	squeezed := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{`1 node Echo fh-1 `, `count=3 message="deploy to prod"`, `2 node Echo fh-2 `, `message=second`} {
		if !strings.Contains(squeezed, want) {
			t.Errorf("approvals lacks %q:\n%s", want, out)
		}
	}
	var list controlapi.ApprovalsResponse
	d.ctlJSON(&list, "approvals")
	if len(list.Pending) != 2 || string(list.Pending[0].Args["count"]) != "3" {
		t.Errorf("approvals --json = %+v", list)
	}

	if code, out, errOut := d.ctl("approve", "1"); code != exitOK || out != "approved 1: Echo (request fh-1)\n" {
		t.Errorf("approve = %d %q %s", code, out, errOut)
	}
	if res := d.result(first); res.Status != wsproto.StatusSuccess || !strings.Contains(string(res.Result), "deploy to prod") {
		t.Errorf("approved call = %+v", res)
	}
	if code, out, _ := d.ctl("deny", "2", "--reason", "not now"); code != exitOK || out != "denied 2: Echo (request fh-2)\n" {
		t.Errorf("deny = %d %q", code, out)
	}
	if res := d.result(second); res.Status != wsproto.StatusError || res.Error != `tool "Echo" denied by the node's owner: not now` {
		t.Errorf("denied call = %+v", res)
	}
	code, _, errOut := d.ctl("approve", "1")
	if code != exitError || !strings.Contains(errOut, `vcpnode: no pending approval with this id: "1"`) {
		t.Errorf("approving again = %d %s", code, errOut)
	}
	if code, _, errOut := d.ctl("approve"); code != exitUsage || !strings.Contains(errOut, "takes one approval ID") {
		t.Errorf("approve without an id = %d %s", code, errOut)
	}
}

func TestApprovalTimeoutThroughTheHub(t *testing.T) {
	d := startDaemon(t, "[tools.Echo]\napproval = \"ask\"\napproval_timeout = \"1s\"\n")
	conn := d.accept()
	res := d.result(d.callAsync(conn, "Echo", nil))
	if res.Status != wsproto.StatusError || res.Error != `tool "Echo" not approved within 1s by the node's owner` {
		t.Errorf("unanswered call = %+v", res)
	}
	if _, out, _ := d.ctl("approvals"); out != "no calls are waiting for approval\n" {
		t.Errorf("approvals after the timeout = %q", out)
	}
}

// TestControlCommandsWithoutDaemon: every command says where it looked.
func TestControlCommandsWithoutDaemon(t *testing.T) {
	sock := filepath.Join(filepath.Dir(testnet.SocketPath(t)), "none.sock")
	for _, args := range [][]string{
		{"status"}, {"tools"}, {"call", "Echo"}, {"reload"}, {"reconnect"}, {"register"}, {"approvals"}, {"approve", "1"}, {"deny", "1"},
	} {
		t.Run(args[0], func(t *testing.T) {
			ta := newTestApp(t)
			code := ta.run(append(args, "--socket", sock)...)
			want := "vcpnode: cannot reach vcpnode at " + sock + ": is it running?\n"
			if code != exitError || ta.stderr.String() != want {
				t.Errorf("exit %d, stderr %q; want %q", code, ta.stderr, want)
			}
		})
	}
}

func TestControlSocketResolution(t *testing.T) {
	d := startDaemon(t, "")
	withSocket := writeFile(t, "c.toml", "[control]\nsocket = \""+d.socket+"\"\n", 0o600)
	// Only [control] socket is read: other mistakes are the daemon's to report.
	invalid := writeFile(t, "invalid.toml", "[control]\nsocket = \""+d.socket+"\"\n[node]\nmax_concurrent = 0\n", 0o600)
	broken := writeFile(t, "bad.toml", "[control\nsocket = 1\n", 0o600)
	runtimeDir := filepath.Dir(testnet.SocketPath(t))

	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string // the socket that is dialled, or an error
	}{
		{"--config", nil, []string{"--config", withSocket}, ""},
		{"$VCPNODE_CONFIG", map[string]string{envConfig: withSocket}, nil, ""},
		{"--socket wins", map[string]string{envConfig: broken}, []string{"--socket", d.socket}, ""},
		{"an invalid config", map[string]string{envConfig: invalid}, nil, ""},
		{"a config that does not parse", map[string]string{envConfig: broken}, nil, "find the control socket in " + broken},
		{"a missing config", nil, []string{"--config", broken + ".missing"}, "find the control socket: open " + broken + ".missing"},
		{"runtime directory", map[string]string{"RUNTIME_DIRECTORY": runtimeDir}, nil, "cannot reach vcpnode at " + filepath.Join(runtimeDir, "vcpnode.sock")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ta := newTestApp(t)
			for k, v := range tt.env {
				ta.env[k] = v
			}
			code := ta.run(append([]string{"status"}, tt.args...)...)
			switch {
			case tt.want == "" && code != exitOK:
				t.Errorf("exit %d: %s", code, ta.stderr)
			case tt.want != "" && (code != exitError || !strings.Contains(ta.stderr.String(), tt.want)):
				t.Errorf("exit %d, stderr %q; want %q", code, ta.stderr, tt.want)
			}
		})
	}
}

func TestCompletion(t *testing.T) {
	d := startDaemon(t, "[tools.Echo]\napproval = \"ask\"\n")
	conn := d.accept()
	pending := d.callAsync(conn, "Echo", map[string]any{"message": "hi"})
	d.waitPending(1)

	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		ta := newTestApp(t)
		if code := ta.run("completion", shell); code != exitOK || !strings.Contains(ta.stdout.String(), "vcpnode") {
			t.Errorf("completion %s: exit %d, %d bytes", shell, code, len(ta.stdout.String()))
		}
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "approve", "--socket", d.socket, ""}, []string{"1\tEcho message=hi"}},
		{[]string{"__complete", "call", "--socket", d.socket, ""}, []string{"Echo\t", "NodeInfo\t"}},
		{[]string{"__complete", "call", "--socket", d.socket + ".none", ""}, []string{":4"}}, // no daemon: nothing, no files
		{[]string{"__complete", "tools", "expose", "--socket", d.socket, ""}, []string{"Echo\t", "NodeInfo\t"}},
		{[]string{"__complete", "tools", "expose", "--socket", d.socket, "Echo", ""}, []string{"on\n", "off\n", ":4"}},
		{[]string{"__complete", "tools", "timeout", "--socket", d.socket, ""}, []string{"Echo\t", "NodeInfo\t"}},
	}
	for _, tt := range tests {
		ta := newTestApp(t)
		if code := ta.run(tt.args...); code != exitOK {
			t.Errorf("%v: exit %d %s", tt.args, code, ta.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(ta.stdout.String(), w) {
				t.Errorf("%v: completions lack %q:\n%s", tt.args, w, ta.stdout)
			}
		}
	}
	if code, _, _ := d.ctl("approve", "1"); code != exitOK {
		t.Fatal("approve failed")
	}
	d.result(pending)
}

// The system service's socket is where control commands look when the
// user's own is absent; tests inject it, so a real service never answers.
func TestSystemSocketFallbackIsInjected(t *testing.T) {
	d := startDaemon(t, "")
	runtimeDir := filepath.Dir(testnet.SocketPath(t))

	ta := newTestApp(t)
	ta.env["RUNTIME_DIRECTORY"] = runtimeDir
	ta.systemSocket = d.socket
	if code := ta.run("status"); code != exitOK {
		t.Fatalf("status with the system socket answering: exit %d\n%s", code, ta.stderr)
	}

	ta = newTestApp(t)
	ta.env["RUNTIME_DIRECTORY"] = runtimeDir
	if code := ta.run("status"); code != exitError || !strings.Contains(ta.stderr.String(), filepath.Join(runtimeDir, "vcpnode.sock")) {
		t.Fatalf("status with no system socket: exit %d, stderr %q", code, ta.stderr)
	}
}

// reconnect waits for the daemon to be connected with its tools
// registered, like tailscale up, and says when it is not.
func TestReconnectWaitsForTheConnection(t *testing.T) {
	d := startDaemon(t, "")
	first := d.accept()
	d.hub.Stop(d.ctx)
	<-first.Done()
	// The hub's end closes first: until the node reads the close, reconnect
	// rightly answers that it is connected.
	d.waitDisconnected()

	code, out, errOut := d.ctl("reconnect", "--timeout", "1s")
	if code != exitError || out != "" || !strings.Contains(errOut, "vcpnode: not connected after 1s: the daemon is ") {
		t.Errorf("reconnect with the hub down: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if err := d.hub.Resume(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = d.ctl("reconnect", "--timeout", "30s")
	if code != exitOK || !strings.HasPrefix(out, "connected to "+d.node.HubURL()) || !strings.Contains(out, "tools registered") {
		t.Errorf("reconnect: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var st controlapi.StatusResponse
	d.ctlJSON(&st, "status")
	if !st.Connection.Registered || !st.Connection.DisconnectedAt.IsZero() || st.Connection.LastErrorAt.IsZero() || st.Connection.LastError == "" {
		t.Errorf("status after the reconnect = %+v", st.Connection)
	}
}

// While reconnecting, status counts the time since the drop (not since the
// current backoff began) and the failed attempts as JSON does, and dates
// the last error.
func TestStatusCountsFromTheDrop(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return now.Add(-d) }
	retry := now.Add(3 * time.Second)
	st := controlapi.StatusResponse{Now: now, StartedAt: now.Add(-time.Hour), Connection: controlapi.ConnectionStatus{
		Phase: controlapi.PhaseBackoff, Since: now.Add(-400 * time.Millisecond), DisconnectedAt: at(21 * time.Second),
		Attempt: 3, RetryAt: retry, LastError: "dial: connection refused", LastErrorAt: at(400 * time.Millisecond),
	}, Placeholders: 2, PlaceholderErrors: 1}
	var b strings.Builder
	if err := printStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{"connection disconnected for 21s; next attempt in 3s (3 failed attempts so far)", "last error (400ms ago) dial: connection refused", "placeholders 2, 1 failing (vcpnode placeholders shows the errors)"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
	// Connected again: the old error is marked as such.
	st.Connection = controlapi.ConnectionStatus{Phase: controlapi.PhaseConnected, Since: now.Add(-time.Minute), Registered: true,
		LastError: "dial: connection refused", LastErrorAt: at(2 * time.Minute)}
	b.Reset()
	if err := printStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	if out := strings.Join(strings.Fields(b.String()), " "); !strings.Contains(out, "last error (2m ago, from an earlier connection) dial") || !strings.Contains(out, "tools registered") {
		t.Errorf("status when connected again:\n%s", b.String())
	}
}
