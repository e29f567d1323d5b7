package sandbox

import "testing"

// TestShowsOverGrants: what the launcher's cover keeps of a hidden tree
// and what the refusal reader takes for mounted back are one decision.
func TestShowsOverGrants(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		grants []string
		path   string
		shown  bool
	}{
		{"no grant", nil, "/run/user/0/bus", false},
		{"the tree granted", []string{"/run"}, "/run/user/0/bus", true},
		{"a grant holding the tree", []string{"/"}, "/run/docker.sock", true},
		{"the path mounted back", []string{"/run/user/0"}, "/run/user/0/bus", true},
		{"the path itself mounted back", []string{"/run/docker.sock"}, "/run/docker.sock", true},
		{"a sibling mounted back", []string{"/run/user/0"}, "/run/user/1000/bus", false},
		{"a name sharing a prefix", []string{"/run/user"}, "/run/users/x", false},
		{"a grant beside the tree", []string{"/runner", "/usr"}, "/run/x", false},
	} {
		p := &policy{}
		for _, g := range c.grants {
			p.Grants = append(p.Grants, Grant{Path: g})
		}
		if got := p.shows("/run", c.path); got != c.shown {
			t.Errorf("%s: shows(/run, %s) over %v = %v, want %v", c.name, c.path, c.grants, got, c.shown)
		}
		whole, keep := p.keptIn("/run")
		if kept := whole || len(keep) > 0; c.shown && !kept {
			t.Errorf("%s: shown but the cover keeps nothing", c.name)
		}
	}
}
