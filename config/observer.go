package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// ObserverConfig is the [observer] table: the server's observer channels
// (/VCPlog/ and /vcpinfo/), kept beside the node connection, and the event
// buffer `vcpnode watch` and GET /v1/events read.
type ObserverConfig struct {
	// Enabled connects to Channels as well as to the node endpoint: the
	// older spelling of [node] mode = "both" (mode.go).
	Enabled bool `toml:"enabled"`
	// Channels are ObserverChannels, each at most once.
	Channels []string `toml:"channels"`
	// Buffer is how many recent events the daemon keeps in memory.
	Buffer int `toml:"buffer"`
	// Notify shows a desktop notification for each server approval request.
	Notify bool `toml:"notify"`
}

// ObserverChannels are the observer channels a server has, as its paths spell them.
var ObserverChannels = []string{"VCPlog", "vcpinfo"}

// Bounds of [observer] buffer.
const (
	MinEventBuffer = 16
	MaxEventBuffer = 100_000
)

func defaultObserverConfig() ObserverConfig {
	return ObserverConfig{Channels: slices.Clone(ObserverChannels), Buffer: 1000}
}

func (c Config) checkObserver(ps *problemList) {
	o := c.Observer
	seen := map[string]bool{}
	for _, ch := range o.Channels {
		if !slices.Contains(ObserverChannels, ch) {
			hint := ""
			for _, known := range ObserverChannels {
				if strings.EqualFold(known, ch) {
					hint = fmt.Sprintf(" (did you mean %q? the server's paths are case-sensitive)", known)
				}
			}
			ps.add("observer.channels", "unknown channel %q%s: use %q", ch, hint, ObserverChannels)
			continue
		}
		if seen[ch] {
			ps.add("observer.channels", "%q is listed twice", ch)
		}
		seen[ch] = true
	}
	if c.Observing() && len(o.Channels) == 0 {
		ps.add("observer.channels", "is empty while node.mode = %q: list %q or use mode %q", c.Mode(), ObserverChannels, ModeDistributed)
	}
	if o.Buffer < MinEventBuffer || o.Buffer > MaxEventBuffer {
		ps.add("observer.buffer", "must be between %d and %d events (got %d)", MinEventBuffer, MaxEventBuffer, o.Buffer)
	}
}

// ObserverURL builds <base>/<channel>/VCP_Key=<key>?deviceName=<device>,
// with the same rules as HubURL (see there). The result holds the key:
// print it only through RedactedURL.
func ObserverURL(base, key, channel, device string) (*url.URL, error) {
	if !slices.Contains(ObserverChannels, channel) {
		return nil, fmt.Errorf("unknown observer channel %q", channel)
	}
	hub, err := HubURL(base, key)
	if err != nil {
		return nil, err
	}
	u := *hub
	prefix := strings.TrimSuffix(hub.EscapedPath(), HubPath+key)
	u.Path = prefix + "/" + channel + "/VCP_Key=" + key
	u.RawPath = ""
	if device != "" {
		u.RawQuery = url.Values{"deviceName": {device}}.Encode()
	}
	if !strings.HasSuffix(strings.SplitN(u.RequestURI(), "?", 2)[0], "/VCP_Key="+key) {
		return nil, fmt.Errorf("%w: it would be altered in the observer URL", ErrInvalidKey)
	}
	return &u, nil
}
