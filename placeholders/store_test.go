package placeholders

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
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

func TestStoreClaims(t *testing.T) {
	s := NewStore()
	k, err := s.Claim("Weather", "plugin Weather")
	if err != nil || k != "{{Weather}}" {
		t.Fatalf("Claim = %q, %v", k, err)
	}
	if _, err := s.Claim("{{Weather}}", "plugin Weather"); err != nil {
		t.Fatalf("re-claim by the owner: %v", err)
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"claim", func() error { _, err := s.Claim("{{Weather}}", "command Weather"); return err }},
		{"set", func() error { return s.Set("Weather", "rain", "command Weather") }},
		{"fail", func() error { return s.Fail("Weather", "command Weather", errors.New("x")) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			var ce *ClaimError
			if !errors.As(err, &ce) || ce.Key != "{{Weather}}" || ce.Holder != "plugin Weather" || ce.Claimant != "command Weather" {
				t.Fatalf("err = %v, want a ClaimError naming both sources", err)
			}
			for _, want := range []string{"{{Weather}}", "plugin Weather", "command Weather"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
		})
	}
	// A claim without a value is listed but not pushed.
	if snap, _ := s.Snapshot(); len(snap) != 0 {
		t.Fatalf("claimed key without value pushed: %v", snap)
	}
	if e, ok := s.Entry("Weather"); !ok || e.HasValue || e.Source != "plugin Weather" {
		t.Fatalf("entry = %+v, %v", e, ok)
	}
}

func TestStoreFailKeepsValue(t *testing.T) {
	s := NewStore()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	if err := s.Set("A", "good", "src"); err != nil {
		t.Fatal(err)
	}
	_, v := s.Snapshot()
	ch := s.Changed()
	now = now.Add(time.Minute)
	if err := s.Fail("A", "src", errors.New("boom")); err != nil {
		t.Fatal(err)
	}
	e, _ := s.Entry("A")
	if e.Value != "good" || !e.HasValue || e.LastError != "boom" || !e.ErrorAt.Equal(now) || !e.UpdatedAt.Equal(now.Add(-time.Minute)) {
		t.Fatalf("after Fail: %+v", e)
	}
	if delta, _ := s.Since(v); len(delta) != 0 {
		t.Fatalf("a failure produced a push: %v", delta)
	}
	select {
	case <-ch:
		t.Fatal("a failure signalled a change")
	default:
	}
	// The same good value again clears the error and refreshes the time, without a change.
	now = now.Add(time.Minute)
	if err := s.Set("A", "good", "src"); err != nil {
		t.Fatal(err)
	}
	e, _ = s.Entry("A")
	if e.LastError != "" || !e.UpdatedAt.Equal(now) || e.Version != v {
		t.Fatalf("after recovery: %+v (version was %d)", e, v)
	}
}

func TestStoreSetClaimsAndRemove(t *testing.T) {
	s := NewStore()
	for _, kv := range [][3]string{{"A", "1", "a"}, {"B", "2", "b"}, {"C", "3", "c"}} {
		if err := s.Set(kv[0], kv[1], kv[2]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Claim("D", "d"); err != nil { // claimed, never set
		t.Fatal(err)
	}
	removed := s.SetClaims(map[string]string{"{{A}}": "a", "{{B}}": "b2", "{{E}}": "e"})
	if !slices.Equal(removed, []string{"{{C}}"}) {
		t.Fatalf("removed = %v, want only the key that had a value", removed)
	}
	var got []string
	for _, e := range s.Entries() {
		got = append(got, e.Key+"="+e.Value+"@"+e.Source)
	}
	if want := []string{"{{A}}=1@a", "{{B}}=2@b2", "{{E}}=@e"}; !slices.Equal(got, want) {
		t.Fatalf("entries = %v, want %v", got, want)
	}
	if err := s.Set("B", "2", "b"); err == nil {
		t.Fatal("the previous owner could still set a key it lost")
	}
	if !s.Remove("{{A}}") {
		t.Fatal("Remove of a key with a value reported false")
	}
	if s.Remove("E") {
		t.Fatal("Remove of a key without a value reported true")
	}
	if s.Remove("A") {
		t.Fatal("second Remove reported true")
	}
	snap, _ := s.Snapshot()
	if !maps.Equal(snap, map[string]string{"{{B}}": "2"}) {
		t.Fatalf("snapshot = %v", snap)
	}
	// A removed key set again is a change, even with the old value.
	_, v := s.Snapshot()
	if err := s.Set("A", "1", "a"); err != nil {
		t.Fatal(err)
	}
	if delta, _ := s.Since(v); !maps.Equal(delta, map[string]string{"{{A}}": "1"}) {
		t.Fatalf("delta = %v", delta)
	}
}
