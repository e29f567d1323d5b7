package config

import (
	"strings"
	"testing"
)

func TestObserverConfig(t *testing.T) {
	cfg, err := Parse([]byte("[observer]\nenabled = true\nbuffer = 50\nnotify = true\n"), "c.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Observer.Enabled || cfg.Observer.Buffer != 50 || len(cfg.Observer.Channels) != 2 || !cfg.Observer.Notify {
		t.Fatalf("observer %+v", cfg.Observer)
	}
	_, err = Parse([]byte("[observer]\nenabled = true\nchannels = [\"vcplog\", \"vcpinfo\", \"vcpinfo\"]\nbuffer = 3\n"), "c.toml")
	if err == nil {
		t.Fatal("bad [observer] accepted")
	}
	for _, want := range []string{`did you mean "VCPlog"`, `"vcpinfo" is listed twice`, "observer.buffer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := Parse([]byte("[observer]\nenabled = true\nchannels = []\n"), "c.toml"); err == nil {
		t.Error("enabled observer without channels accepted")
	}
}

func TestObserverURL(t *testing.T) {
	u, err := ObserverURL("https://hub.example:8443/", "k3y.secret", "VCPlog", "my laptop")
	if err != nil {
		t.Fatal(err)
	}
	if got := u.String(); got != "wss://hub.example:8443/VCPlog/VCP_Key=k3y.secret?deviceName=my+laptop" {
		t.Fatalf("url %s", got)
	}
	if red := RedactedURL(u); strings.Contains(red, "k3y.secret") {
		t.Fatalf("redacted URL shows the key: %s", red)
	}
	if _, err := ObserverURL("ws://h:1", "bad key", "vcpinfo", ""); err == nil || strings.Contains(err.Error(), "bad key") {
		t.Fatalf("bad key: %v", err)
	}
	if _, err := ObserverURL("ws://h:1", "k", "other", ""); err == nil {
		t.Fatal("unknown channel accepted")
	}
}
