package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// HubPath is what the server's upgrade handler matches, anchored at the root
// of the path: ^/vcp-distributed-server/VCP_Key=(.+)$. The key is compared
// verbatim, never percent-decoded.
const HubPath = "/vcp-distributed-server/VCP_Key="

// Errors HubURL and Config.Key wrap. Their messages never contain the key.
var (
	ErrInvalidHubURL = errors.New("invalid hub URL")
	ErrInvalidKey    = errors.New("invalid hub key")
)

// keyPunct is the punctuation a key may hold besides [A-Za-z0-9]: characters
// that Go's URL encoder leaves alone in a path and that the server's
// url.parse keeps as they are.
const keyPunct = "._~-'()*+,;=:@!$&"

// HubURL builds the WebSocket URL <base>/vcp-distributed-server/VCP_Key=<key>.
//
// http becomes ws and https becomes wss; ws and wss are kept; other schemes,
// a query, a fragment and credentials in base are refused. Trailing slashes
// are trimmed, because "//vcp-distributed-server" would not match the
// server's anchored pattern. A path prefix in base is kept, but the server
// itself never serves one: it works only behind a proxy that strips it
// (Config.Warnings says so).
//
// The key must be made of [A-Za-z0-9] and ._~-'()*+,;=:@!$& so that it
// reaches the server byte for byte; the built URL is checked to end with it.
// Errors never contain the key. The returned URL does: print it only through
// RedactedURL.
func HubURL(base, key string) (*url.URL, error) {
	u, err := normalizeBase(base)
	if err != nil {
		return nil, err
	}
	if msg := keyProblem(key); msg != "" {
		return nil, fmt.Errorf("%w: %s", ErrInvalidKey, msg)
	}
	// Re-parse rather than set fields, so that the check below sees the URL
	// exactly as the dialer will.
	built, err := url.Parse(u.Scheme + "://" + u.Host + u.EscapedPath() + HubPath + key)
	if err != nil {
		return nil, fmt.Errorf("%w: the URL built with it does not parse", ErrInvalidKey) // err would echo the key
	}
	if !strings.HasSuffix(built.RequestURI(), HubPath+key) || built.RawQuery != "" || built.Fragment != "" {
		return nil, fmt.Errorf("%w: it would be altered in the URL; use only letters, digits and %s", ErrInvalidKey, keyPunct)
	}
	return built, nil
}

// normalizeBase checks a hub base URL and returns it with a ws/wss scheme and
// no trailing slash. Error messages redact the URL.
func normalizeBase(base string) (*url.URL, error) {
	if msg := baseURLProblem(base); msg != "" {
		return nil, fmt.Errorf("%w: %s", ErrInvalidHubURL, msg)
	}
	u, _ := url.Parse(strings.TrimSpace(base)) // parsed cleanly in baseURLProblem
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if u.RawPath != "" {
		u.RawPath = strings.TrimRight(u.RawPath, "/")
	}
	return u, nil
}

// baseURLProblem describes what is wrong with a hub base URL, or returns "".
func baseURLProblem(base string) string {
	shown := strconv.Quote(Redact(base))
	if strings.TrimSpace(base) == "" {
		return "is empty: set the main server's base URL, like ws://127.0.0.1:6005"
	}
	if guess := schemeGuess(strings.TrimSpace(base)); guess != "" {
		return fmt.Sprintf("%s has no scheme: did you mean %q?", shown, Redact(guess))
	}
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // ue.Error() would repeat the URL
		}
		return fmt.Sprintf("%s does not parse: %s", shown, Redact(err.Error()))
	}
	switch u.Scheme {
	case "ws", "wss", "http", "https":
	case "":
		return fmt.Sprintf("%s has no scheme: write it like ws://host:port or https://host", shown)
	default:
		return fmt.Sprintf("scheme %q is not supported: use ws://, wss://, http:// or https://", u.Scheme)
	}
	switch {
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return fmt.Sprintf("%s has no host: write it like %s://host:port", shown, u.Scheme)
	case u.User != nil:
		return "credentials in the URL are not supported; remove the user:password@ part"
	case u.RawQuery != "" || u.ForceQuery:
		return fmt.Sprintf("%s has a query; give only the base URL: vcpnode adds the path and key itself", shown)
	case u.Fragment != "" || strings.Contains(base, "#"):
		return fmt.Sprintf("%s has a fragment; give only the base URL", shown)
	case strings.Contains(strings.ToLower(u.Path), "vcp-distributed-server") || strings.Contains(strings.ToLower(base), "vcp_key"):
		return "give only the server's base URL: vcpnode adds /vcp-distributed-server/VCP_Key=… itself (and the key belongs in hub.key_file)"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("port %q is not between 1 and 65535", p)
		}
	}
	return ""
}

// schemeGuess is base with ws:// before it when base has no scheme and
// reads as a host, host:port or host:port/path that way ("127.0.0.1:6005",
// which url.Parse would take for a scheme "127.0.0.1"); "" otherwise. A
// bare host gets the server's usual port, 6005: ws:// alone means 80.
func schemeGuess(base string) string {
	if base == "" || strings.Contains(base, "://") {
		return ""
	}
	u, err := url.Parse("ws://" + base)
	if err != nil || u.Hostname() == "" || u.User != nil {
		return ""
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), defaultHubPort)
		return u.String()
	}
	return "ws://" + base
}

// defaultHubPort is the port VCPToolBox's server listens on unless told
// otherwise.
const defaultHubPort = "6005"

// keyProblem describes what makes key unusable in the hub URL, or returns "".
// The message never quotes the key or any of its characters.
func keyProblem(key string) string {
	if key == "" {
		return "the key is empty"
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case isKeyByte(c):
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c < 0x20 || c == 0x7f:
			return "the key contains whitespace or a control character; use only letters, digits and " + keyPunct
		case c >= 0x80:
			return "the key contains a non-ASCII character; use only letters, digits and " + keyPunct
		default:
			return "the key contains a character that would be percent-encoded or cut off in the URL path, so the server would never match it; use only letters, digits and " + keyPunct
		}
	}
	return ""
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(keyPunct, c) >= 0
}
