package config

import (
	"net/url"
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
