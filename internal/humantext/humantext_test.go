package humantext

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{2 * time.Minute, "2m"},
		{90 * time.Second, "1m30s"},
		{time.Hour, "1h"},
		{time.Hour + 30*time.Second, "1h0m30s"},
		{45 * time.Second, "45s"},
		{1500 * time.Millisecond, "1.5s"},
		{899970 * time.Microsecond, "900ms"},
		{30 * time.Millisecond, "30ms"},
	}
	for _, tt := range tests {
		if got := Duration(tt.in); got != tt.want {
			t.Errorf("Duration(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"ping_interval", "ping_interval", 0},
		{"ping_intervl", "ping_interval", 1},  // one left out
		{"pnig_interval", "ping_interval", 2}, // two swapped
		{"kitten", "sitting", 3},
		{"listfiles", "ListFiles", 2}, // case counts
	}
	for _, tt := range tests {
		if got := EditDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	s := "aé€" // 1 + 2 + 3 bytes
	for n, want := range map[int]string{-1: "", 0: "", 1: "a", 2: "a", 3: "aé", 5: "aé", 6: s, 9: s} {
		if got := Truncate(s, n); got != want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"longer", 4, "long…"},
		{"aé€", 2, "a…"},
	} {
		if got := Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"ReadFile", "WriteFile", "UnitConverter", "Echo"}
	for typo, want := range map[string]string{
		"readfile": "ReadFile", "ReadFlie": "ReadFile", "UnitConvertor": "UnitConverter",
		"Ech": "Echo", "Weather": "", "": "", "WriteFiles": "WriteFile",
	} {
		if got := Closest(typo, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", typo, got, want)
		}
	}
}
