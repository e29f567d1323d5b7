package placeholders

import (
	"errors"
	"maps"
	"testing"
)

func TestNormalizeKey(t *testing.T) {
	cases := []struct {
		in, want string
		bad      bool
	}{
		{"Name", "{{Name}}", false},
		{"{{Name}}", "{{Name}}", false},
		{"  {{Dev.Box_1:x-y}} ", "{{Dev.Box_1:x-y}}", false},
		{"", "", true},
		{"{{}}", "", true},
		{"{{a b}}", "", true},
		{"{{Name}", "", true},
		{"Na}}me", "", true},
		{"名字", "", true},
	}
	for _, c := range cases {
		got, err := NormalizeKey(c.in)
		if c.bad {
			if !errors.Is(err, ErrBadKey) {
				t.Errorf("NormalizeKey(%q) = %q, %v; want ErrBadKey", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("NormalizeKey(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestStoreVersionsAndChanges(t *testing.T) {
	s := NewStore()
	if snap, v := s.Snapshot(); len(snap) != 0 || v != 0 {
		t.Fatalf("empty store: %v, %d", snap, v)
	}
	ch := s.Changed()
	if err := s.Set("A", "1", "config"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("Changed channel not closed by Set")
	}
	if err := s.Set("{{B}}", "2", "config"); err != nil {
		t.Fatal(err)
	}
	snap, v := s.Snapshot()
	if want := map[string]string{"{{A}}": "1", "{{B}}": "2"}; !maps.Equal(snap, want) || v != 2 {
		t.Fatalf("snapshot = %v at %d", snap, v)
	}
	// Same value again is not a change.
	if err := s.Set("A", "1", "config"); err != nil {
		t.Fatal(err)
	}
	if delta, v2 := s.Since(v); len(delta) != 0 || v2 != v {
		t.Fatalf("unchanged set produced delta %v at %d", delta, v2)
	}
	if err := s.Set("A", "3", "config"); err != nil {
		t.Fatal(err)
	}
	if delta, _ := s.Since(v); !maps.Equal(delta, map[string]string{"{{A}}": "3"}) {
		t.Fatalf("delta = %v", delta)
	}
	if err := s.Set("bad key", "x", "config"); !errors.Is(err, ErrBadKey) {
		t.Fatalf("bad key accepted: %v", err)
	}
	if n := len(s.Entries()); n != 2 {
		t.Fatalf("entries = %d", n)
	}
}
