package mcp

import (
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strings"
)

// A stdio server gets a small, explicit environment, like a plugin: a few
// daemon variables every program expects, those named in pass_env, and the
// server's own env table. Never the whole daemon environment, and never a
// secret variable (the VCP key), even when named.
var baseEnvKeys = []string{"PATH", "HOME", "LANG", "TZ", "TMPDIR", "USER", "LOGNAME", "SHELL"}

// serverEnv builds a stdio server's environment as sorted "K=V" entries.
func serverEnv(o Options, c ServerConfig) []string {
	want := map[string]bool{}
	for _, k := range append(slices.Clone(baseEnvKeys), o.PassEnv...) {
		want[k] = true
	}
	if runtime.GOOS == "windows" {
		want["SYSTEMROOT"] = true
	}
	vars := map[string]string{}
	for _, kv := range o.Environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" && (want[k] || strings.HasPrefix(k, "LC_")) {
			vars[k] = v
		}
	}
	for k, v := range c.Env {
		vars[k] = v
	}
	for _, k := range o.Secret {
		delete(vars, k)
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		if strings.ContainsRune(v, 0) {
			continue
		}
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// envRef says whether a header value is a "$NAME" reference, and names it.
func envRef(v string) (string, bool) {
	name, ok := strings.CutPrefix(v, "$")
	if !ok {
		return "", false
	}
	for _, r := range name {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", false // a literal value that happens to start with "$"
		}
	}
	return name, true
}

// headers resolves a streamable HTTP server's headers. Errors name the
// header and the variable, never a value.
func headers(o Options, c ServerConfig) (http.Header, error) {
	h := http.Header{}
	for k, v := range c.Headers {
		if name, ok := envRef(v); ok {
			if slices.Contains(o.Secret, name) {
				return nil, fmt.Errorf("header %s: $%s is the node's secret and is never sent to an MCP server", k, name)
			}
			v = o.Getenv(name)
			if v == "" {
				return nil, fmt.Errorf("header %s: $%s is not set", k, name)
			}
		}
		h.Set(k, v)
	}
	return h, nil
}

// headerTransport adds fixed headers to every request of the SDK's client.
type headerTransport struct {
	base http.RoundTripper
	h    http.Header
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, vs := range t.h {
		req.Header[k] = slices.Clone(vs)
	}
	return t.base.RoundTrip(req)
}
