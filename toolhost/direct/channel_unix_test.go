//go:build unix

package direct

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoopbackChannelRunsAPlugin runs a real Node.js host over the channel
// Windows uses (a loopback connection with a token instead of fd 3): the
// module loads, answers a call, and sees neither the address nor the token.
// No fd 3 is passed in this mode, so a host that ignored the address could
// not answer at all.
func TestLoopbackChannelRunsAPlugin(t *testing.T) {
	needNode(t)
	tcpChannelForTests = true
	t.Cleanup(func() { tcpChannelForTests = false })
	root := filepath.Join(t.TempDir(), "Plugin")
	dir := filepath.Join(root, "Env")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"plugin-manifest.json": `{"name":"Env","pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct"}}`,
		"index.js":             "module.exports = { processToolCall: async () => ({ keys: Object.keys(process.env).filter(k => k.startsWith('VCPNODE_DIRECT')) }) };\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := newTestHost(t, Options{})
	l := h.Load(scanDirect(t, root), Settings{})
	v, err := invoke(nil, findTool(t, l, "Env"), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Keys []string
	}
	if err := json.Unmarshal(v.(json.RawMessage), &got); err != nil {
		t.Fatalf("result %s: %v", asJSON(t, v), err)
	}
	if len(got.Keys) != 0 {
		t.Errorf("the module sees %v", got.Keys)
	}
}

// TestLoopbackChannelTakesOnlyTheToken: a connection with a wrong token is
// dropped; the host's, with the token, is taken, and what it sent after the
// token is left for the message reader.
func TestLoopbackChannelTakesOnlyTheToken(t *testing.T) {
	c, err := newTCPChannel()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	addr := strings.TrimPrefix(c.childEnv()[0], envChannel+"=")
	token := strings.TrimPrefix(c.childEnv()[1], envChannelToken+"=")
	strangerDropped := make(chan error, 1)
	hostConn := make(chan net.Conn, 1)
	defer func() {
		select {
		case h := <-hostConn:
			h.Close()
		default:
		}
	}()
	go func() {
		s, err := net.Dial("tcp", addr)
		if err != nil {
			strangerDropped <- err
			return
		}
		defer s.Close()
		_, _ = s.Write([]byte(strings.Repeat("x", len(token)) + "\n"))
		_ = s.SetReadDeadline(time.Now().Add(waitLimit))
		_, err = s.Read(make([]byte, 1)) // EOF once dropped
		strangerDropped <- err
		h, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		hostConn <- h
		_, _ = h.Write([]byte(token + "\n{\"t\":\"ready\"}\n"))
	}()
	conn, err := c.connect(func() bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := <-strangerDropped; err == nil {
		t.Fatal("the stranger's connection was not dropped")
	}
	_ = conn.SetReadDeadline(time.Now().Add(waitLimit))
	buf := make([]byte, 64)
	n, err := conn.Read(buf)
	if err != nil || string(buf[:n]) != "{\"t\":\"ready\"}\n" {
		t.Fatalf("after the token: %q, %v", buf[:n], err)
	}
}

// A host that exits before connecting fails the start at once, not after
// connectWait.
func TestLoopbackChannelNoticesADeadHost(t *testing.T) {
	c, err := newTCPChannel()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), connectWait/2)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.connect(func() bool { return false })
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "exited before it connected") {
			t.Fatalf("connect = %v", err)
		}
	case <-ctx.Done():
		t.Fatal("connect waited for a dead host")
	}
}
