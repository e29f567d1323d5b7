package config

import (
	"errors"
	"reflect"
	"testing"
)

// A file with problems still gives the settings that decoded, and names
// the problem behind each setting that did not.
func TestParsePartial(t *testing.T) {
	doc := `[hub]
key_file = 5
kye = "x"
[plugins]
dirs = ["/srv/plugins", "relative"]
[control]
group = "devs"
[tools.X]
expose = "yes"
[tools.Y]
approval = "ask"
`
	p, err := ParsePartial([]byte(doc), "c.toml")
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) != 4 {
		t.Fatalf("err = %v, want 4 problems", err)
	}
	if p.Unread != "" {
		t.Fatalf("Unread = %q for a file that parses", p.Unread)
	}
	if got := p.Config.Plugins.Dirs; !reflect.DeepEqual(got, []string{"/srv/plugins", "relative"}) {
		t.Errorf("plugins.dirs = %q", got)
	}
	if p.Config.Control.Group != "devs" || p.Config.Tools["Y"].Approval != "ask" {
		t.Errorf("settings after the problems were not decoded: %+v %+v", p.Config.Control, p.Config.Tools)
	}
	for _, tt := range []struct{ key, lost, bad string }{
		{"hub.key_file", "hub.key_file", "hub.key_file"},
		{"hub.key", "", ""},
		{"hub", "", "hub.key_file"},
		{"hub.kye", "", ""}, // unknown: nothing read, nothing lost
		{"plugins.dirs", "", "plugins.dirs[1]"},
		{"plugins.dirs[0]", "", ""},
		{"plugins.dirs[1]", "plugins.dirs[1]", "plugins.dirs[1]"},
		{"control.group", "", ""},
		{"tools", "", "tools.X.expose"},
		{"tools.X", "", "tools.X.expose"},
		{"tools.X.expose", "tools.X.expose", "tools.X.expose"},
		{"tools.Y", "", ""},
		{"tools.Xa", "", ""},
	} {
		if got := p.Lost(tt.key); got != tt.lost {
			t.Errorf("Lost(%q) = %q, want %q", tt.key, got, tt.lost)
		}
		if got := p.Bad(tt.key); got != tt.bad {
			t.Errorf("Bad(%q) = %q, want %q", tt.key, got, tt.bad)
		}
	}

	// A table with a wrong type loses everything in it.
	p, err = ParsePartial([]byte("tools = 3\n[control]\ngroup = \"devs\"\n"), "c.toml")
	if err == nil || p.Lost("tools.X") != "tools" || p.Lost("control.group") != "" || p.Config.Control.Group != "devs" {
		t.Errorf("tools = 3: err %v, Lost(tools.X) %q, group %q", err, p.Lost("tools.X"), p.Config.Control.Group)
	}

	// A syntax error leaves nothing but the defaults.
	p, err = ParsePartial([]byte("[control]\ngroup = \"devs\"\n[hub\n"), "c.toml")
	if err == nil || p.Unread == "" || !reflect.DeepEqual(p.Config, Default()) {
		t.Errorf("syntax error: err %v, Unread %q, config %+v", err, p.Unread, p.Config.Control)
	}

	// A good file: nothing lost.
	p, err = ParsePartial([]byte("[control]\ngroup = \"devs\"\n"), "c.toml")
	if err != nil || p.Unread != "" || p.Bad("control") != "" {
		t.Errorf("good file: err %v, Unread %q", err, p.Unread)
	}
}
