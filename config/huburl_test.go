package config

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

func TestHubURL(t *testing.T) {
	tests := []struct{ base, key, want string }{
		{"ws://127.0.0.1:6005", "k", "ws://127.0.0.1:6005/vcp-distributed-server/VCP_Key=k"},
		{"http://127.0.0.1:6005", "k", "ws://127.0.0.1:6005/vcp-distributed-server/VCP_Key=k"},
		{"https://vcp.example.org", "k", "wss://vcp.example.org/vcp-distributed-server/VCP_Key=k"},
		{"wss://vcp.example.org:8443", "k", "wss://vcp.example.org:8443/vcp-distributed-server/VCP_Key=k"},
		{"HTTP://Host:80", "k", "ws://Host:80/vcp-distributed-server/VCP_Key=k"},
		{"ws://h:1/", "k", "ws://h:1/vcp-distributed-server/VCP_Key=k"},
		{"ws://h:1///", "k", "ws://h:1/vcp-distributed-server/VCP_Key=k"},
		{"  ws://h:1  ", "k", "ws://h:1/vcp-distributed-server/VCP_Key=k"},
		{"https://h/vcp/", "k", "wss://h/vcp/vcp-distributed-server/VCP_Key=k"},
		{"https://h/a%20b/", "k", "wss://h/a%20b/vcp-distributed-server/VCP_Key=k"},
		{"ws://[::1]:6005", "k", "ws://[::1]:6005/vcp-distributed-server/VCP_Key=k"},
		{"ws://h", "Az09._~-'()*+,;=:@!$&", "ws://h/vcp-distributed-server/VCP_Key=Az09._~-'()*+,;=:@!$&"},
	}
	for _, tt := range tests {
		u, err := HubURL(tt.base, tt.key)
		if err != nil {
			t.Errorf("HubURL(%q) error: %v", tt.base, err)
			continue
		}
		if got := u.String(); got != tt.want {
			t.Errorf("HubURL(%q) = %s, want %s", tt.base, got, tt.want)
		}
		if !strings.HasSuffix(u.RequestURI(), "VCP_Key="+tt.key) {
			t.Errorf("HubURL(%q).RequestURI() = %s", tt.base, u.RequestURI())
		}
	}
}

func TestHubURLRefusesBadBases(t *testing.T) {
	tests := []struct{ base, msg string }{
		{"", "is empty"},
		{"127.0.0.1:6005", `has no scheme: did you mean "ws://127.0.0.1:6005"?`},
		{"vcp.example.org:8080/prefix", `did you mean "ws://vcp.example.org:8080/prefix"?`},
		{"localhost:6005", `did you mean "ws://localhost:6005"?`},
		// A bare host keeps the server's usual port, not ws://'s 80.
		{"localhost", `"localhost" has no scheme: did you mean "ws://localhost:6005"?`},
		{"vcp.example.org/prefix", `did you mean "ws://vcp.example.org:6005/prefix"?`},
		{"ftp://h", `scheme "ftp" is not supported`},
		{"//h:1", "has no scheme"},
		{"ws:opaque", "has no host"},
		{"ws:///path", "has no host"},
		{"ws://user:pw@h", "credentials"},
		{"ws://h/?x=1", "has a query"},
		{"ws://h/?", "has a query"},
		{"ws://h/#frag", "has a fragment"},
		{"ws://h/#", "has a fragment"},
		{"ws://h:99999", "not between 1 and 65535"},
		{"ws://h:1/vcp-distributed-server/VCP_Key=pasted-secret", "base URL"},
		{"ws://h:1/x?VCP_Key=pasted-secret", "query"},
		{"ws://h\x7f", "does not parse"},
	}
	for _, tt := range tests {
		_, err := HubURL(tt.base, "k")
		if !errors.Is(err, ErrInvalidHubURL) {
			t.Errorf("HubURL(%q) = %v, want ErrInvalidHubURL", tt.base, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("HubURL(%q) = %q, want it to mention %q", tt.base, err, tt.msg)
		}
		if strings.Contains(err.Error(), "pasted-secret") {
			t.Errorf("HubURL(%q) error shows the key: %q", tt.base, err)
		}
	}
}

func TestHubURLRefusesBadKeysWithoutShowingThem(t *testing.T) {
	keys := []string{
		"", "with space", "tab\there", "new\nline", "trailing\r", "nul\x00byte", "del\x7f",
		"slash/inside", "question?mark", "hash#tag", "percent%20", "bare%", "quote\"d", "back\\slash",
		"less<than", "more>than", "back`tick", "curly{brace}", "pipe|x", "caret^x", "square[x]",
		"ünïcode-key", "emoji-🔑-key", "/", "?", "#", "%", "\"", "\\", "{", "}", "|", "^", "[", "]", "<", ">", "`",
	}
	for _, key := range keys {
		_, err := HubURL("ws://127.0.0.1:6005", key)
		if !errors.Is(err, ErrInvalidKey) {
			t.Errorf("HubURL(key %q) = %v, want ErrInvalidKey", key, err)
			continue
		}
		if key != "" && strings.Contains(err.Error(), key) {
			t.Errorf("HubURL(key %q) error contains the key: %q", key, err)
		}
	}
}

// TestHubURLReachesTheServerVerbatim dials a loopback server that matches
// the path the way VCPToolBox does (the raw path, never decoded), once per
// allowed punctuation character.
func TestHubURLReachesTheServerVerbatim(t *testing.T) {
	pattern := regexp.MustCompile(`^/vcp-distributed-server/VCP_Key=(.+)$`)
	seen := make(chan string, 1)
	upgrader := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := pattern.FindStringSubmatch(r.URL.EscapedPath())
		if m == nil {
			http.Error(w, "no match", http.StatusNotFound)
			return
		}
		seen <- m[1]
		c, err := upgrader.Upgrade(w, r, nil)
		if err == nil {
			c.Close()
		}
	}))
	defer srv.Close()

	keys := []string{"plain-Key_0.9~"}
	for _, c := range keyPunct {
		keys = append(keys, "k"+string(c)+"k")
	}
	for _, key := range keys {
		u, err := HubURL(srv.URL+"/", key)
		if err != nil {
			t.Fatalf("HubURL(key %q): %v", key, err)
		}
		conn, resp, err := websocket.DefaultDialer.Dial(u.String(), nil)
		if err != nil {
			t.Errorf("dial with key %q: %v (response %v)", key, err, resp)
			continue
		}
		conn.Close()
		if got := <-seen; got != key {
			t.Errorf("server saw key %q, want %q", got, key)
		}
	}
}
