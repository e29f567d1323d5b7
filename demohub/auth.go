package demohub

import (
	"net/http"
	"strings"
)

// How a hub takes the key (VCPToolBox docs/WEBSOCKET_AUTH_MIGRATION.md).
// Every refusal drops the socket before any HTTP answer, as the server's
// socket.destroy() does.
const (
	// AuthPath is the server before the migration: the key in the path
	// only; a key-less path is an unknown path. The default.
	AuthPath = "path"
	// AuthHeader is a migrated server with ALLOW_LEGACY_WS_URL_KEY=false:
	// the key-less paths with Authorization: Bearer <key> (or x-vcp-key);
	// the key in the path is refused.
	AuthHeader = "header"
	// AuthBoth is a server during the migration: either way.
	AuthBoth = "both"
	// AuthStripHeader is a migrated server behind a proxy that drops the
	// Authorization header: a key-less handshake arrives without a key.
	AuthStripHeader = "strip-header"
)

// keylessTarget tells whether uri is a key-less endpoint, and which: the
// node's ("") or an observer channel's.
func keylessTarget(uri string) (channel string, ok bool) {
	path, _, _ := strings.Cut(uri, "?")
	path = strings.TrimSuffix(strings.ReplaceAll(path, `\`, "/"), "/")
	switch path {
	case strings.TrimSuffix(EndpointPrefix, "/VCP_Key="):
		return "", true
	case "/" + ChannelVCPLog:
		return ChannelVCPLog, true
	case "/" + ChannelVCPInfo:
		return ChannelVCPInfo, true
	}
	return "", false
}

// headerKey is the key a handshake carries in its headers, Authorization
// first, as the migration's extraction order says.
func headerKey(r *http.Request) string {
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return r.Header.Get("X-Vcp-Key")
}

// keyOf is the key a request presents under the hub's auth mode, and
// whether its target is an endpoint the hub serves that way.
func (h *Hub) keyOf(r *http.Request) (string, bool) {
	mode := h.opts.Auth
	if mode == "" {
		mode = AuthPath
	}
	if _, keyless := keylessTarget(r.RequestURI); keyless {
		switch mode {
		case AuthHeader, AuthBoth:
			k := headerKey(r)
			return k, k != ""
		default: // AuthPath does not know the path; the proxy ate the key
			return "", false
		}
	}
	if mode == AuthHeader {
		return "", false
	}
	key, ok := keyFromRequestURI(r.RequestURI)
	if !ok {
		_, key, ok = observerChannel(r.RequestURI)
	}
	return key, ok
}

// channelOf is the observer channel a request targets, in either form.
func channelOf(uri string) (string, bool) {
	if ch, keyless := keylessTarget(uri); keyless {
		return ch, ch != ""
	}
	ch, _, ok := observerChannel(uri)
	return ch, ok
}
