package main

import (
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/config"
)

// TestConfigCheckSandboxNamesAndKeys: config check reports an unknown
// profile wherever it is named and an unknown key in [sandbox] or a
// profile, each with its position, and says that the profiles were not
// checked against the machine.
func TestConfigCheckSandboxNamesAndKeys(t *testing.T) {
	path := writeFile(t, "c.toml", `[hub]
url = "ws://127.0.0.1:1"

[sandbox]
profile = "strict"
requires = true

[sandbox.profiles.web]
extends = "offline"
conect_ports = [443]

[tools.Weather]
sandbox = "webb"
`, 0o600)
	ta := newTestApp(t)
	ta.env[config.EnvKey] = "good-key"
	if code := ta.run("config", "check", "-c", path); code != exitError {
		t.Fatalf("exit code %d, want %d", code, exitError)
	}
	want := path + `:5:1: sandbox.profile: unknown sandbox profile "strict" (known: default, none, offline, web)` + "\n" +
		path + `:6:1: sandbox.requires: unknown key (did you mean "require"?)` + "\n" +
		path + `:10:1: sandbox.profiles.web.conect_ports: unknown key (did you mean "connect_ports"?)` + "\n" +
		path + `:13:1: tools.Weather.sandbox: unknown sandbox profile "webb" (known: default, none, offline, web)` + "\n" +
		"not checked: the sandbox profiles in use against this machine: sandbox.profile has a problem (above)\n"
	// The warning that Weather is no tool here comes first; the rest is ours.
	got := ta.stdout.String()
	if _, rest, ok := strings.Cut(got, "\n"); ok && strings.HasPrefix(got, "warning: [tools.Weather] names no tool") {
		got = rest
	}
	if got != want {
		t.Errorf("stdout =\n%s\nwant\n%s", got, want)
	}
}
