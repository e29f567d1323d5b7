package config

import (
	"net/url"
	"path/filepath"
	"strings"
)

// HubAuths are the values of [hub] auth: "auto" sends the key in an
// Authorization header on the key-less path and falls back to the key in
// the path when the server does not take it; "header" and "path" use one
// way only.
var HubAuths = []string{"auto", "header", "path"}

// KeylessURL is a node or observer URL (HubURL, ObserverURL) without its
// /VCP_Key=<key> part: the endpoint that takes the key in a header.
func KeylessURL(keyed *url.URL) *url.URL {
	u := *keyed
	if i := strings.LastIndex(u.Path, "/VCP_Key="); i >= 0 {
		u.Path = u.Path[:i]
	}
	u.RawPath = ""
	return &u
}

// HubAuthFile is the file in the state directory, beside OverridesFile,
// where [hub] auth = "auto" remembers the way each endpoint took the key
// (header or path) for the next start. It holds no key.
const HubAuthFile = "hub-auth.json"

// HubAuthPath is where a node with this config remembers its ways.
func (c Config) HubAuthPath(getenv func(string) string, euid int) (string, error) {
	dir, err := c.Plugins.StateDirectory(getenv, euid)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, HubAuthFile), nil
}
