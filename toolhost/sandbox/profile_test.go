package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestResolveExtends(t *testing.T) {
	no := false
	got, err := Resolve(map[string]Spec{
		"web":   {Extends: "offline", Network: new(true), ConnectPorts: []int{443}, Memory: "512MiB", Pids: 64, CPU: 1.5},
		"notes": {Extends: "web", Write: []string{"~/notes"}},
		"quiet": {Extends: "default", Network: &no},
	})
	if err != nil {
		t.Fatal(err)
	}
	n := got["notes"]
	if !n.Network || !slices.Equal(n.ConnectPorts, []uint16{443}) || n.Memory != 512<<20 || n.Pids != 64 || n.CPU != 1.5 {
		t.Errorf("notes: %+v", n)
	}
	if !slices.Contains(n.Write, "~/notes") || !slices.Contains(n.Read, "/usr") {
		t.Errorf("notes lost its grants: %+v", n)
	}
	if got["quiet"].Network || !got["default"].Network || got["offline"].Network || !got["none"].Off {
		t.Errorf("network flags: %+v", got)
	}
}

func TestResolveErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		specs map[string]Spec
		key   string
		want  string
	}{
		{"unknown base", map[string]Spec{"a": {Extends: "nosuch"}}, "profiles.a.extends", "unknown sandbox profile"},
		{"self", map[string]Spec{"a": {Extends: "a"}}, "profiles.a.extends", "extends itself"},
		{"loop", map[string]Spec{"a": {Extends: "b"}, "b": {Extends: "a"}}, "extends", "extends itself"},
		{"relative", map[string]Spec{"a": {Read: []string{"data/x"}}}, "profiles.a.read", "relative"},
		{"lots", map[string]Spec{"a": {Memory: "lots"}}, "profiles.a.memory", `"lots" is not a size`},
		{"port", map[string]Spec{"a": {ConnectPorts: []int{70000}}}, "profiles.a.connect_ports", "70000"},
		{"pids", map[string]Spec{"a": {Pids: -1}}, "profiles.a.pids", "negative"},
		{"pids too few", map[string]Spec{"a": {Pids: 6}}, "profiles.a.pids", "6 is too few to start anything"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Resolve(c.specs)
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.Contains(fe.Key, c.key) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want key %q and %q", err, c.key, c.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"64MiB": 64 << 20, "2G": 2 << 30, "1.5GiB": 3 << 29, "100MB": 100e6, "1048576": 1 << 20} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"lots", "", "-5M", "12 parsecs", "10K"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
	if FormatSize(64<<20) != "64MiB" {
		t.Error(FormatSize(64 << 20))
	}
}

// TestCarve: a granted tree holding a protected file is granted entry by
// entry, the protected one left out, down to the file.
func TestCarve(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"etc/hosts", "etc/vcpnode/config.toml", "etc/vcpnode/key", "etc/vcpnode/ok", "etc/ssl/c"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "etc/vcpnode/key"), filepath.Join(root, "etc/keylink")); err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(root, "etc")
	got := carve([]Grant{{Path: etc}, {Path: filepath.Join(root, "missing")}, {Path: filepath.Join(etc, "vcpnode/key"), Write: true}},
		[]string{filepath.Join(etc, "vcpnode/config.toml"), filepath.Join(etc, "vcpnode/key")})
	var paths []string
	for _, g := range got {
		paths = append(paths, strings.TrimPrefix(g.Path, etc+"/"))
	}
	want := []string{"hosts", "ssl", "vcpnode/ok"}
	if !slices.Equal(paths, want) {
		t.Errorf("carved grants %q, want %q", paths, want)
	}
}
