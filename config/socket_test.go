package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDefaultControlSocket(t *testing.T) {
	xdg := t.TempDir()
	tests := []struct {
		name string
		env  map[string]string
		uid  int
		want string
	}{
		{"systemd RuntimeDirectory", map[string]string{"RUNTIME_DIRECTORY": "/run/vcpnode:/run/other", "XDG_RUNTIME_DIR": xdg}, 1000, "/run/vcpnode/vcpnode.sock"},
		{"root", map[string]string{"XDG_RUNTIME_DIR": xdg}, 0, SystemControlSocket},
		{"user", map[string]string{"XDG_RUNTIME_DIR": xdg}, 1000, filepath.Join(xdg, "vcpnode.sock")},
		{"user without a runtime dir", map[string]string{"XDG_RUNTIME_DIR": filepath.Join(xdg, "missing"), "TMPDIR": "/var/tmp"}, 1000, "/var/tmp/vcpnode-1000/vcpnode.sock"},
		{"nothing set", map[string]string{}, 1000, "/tmp/vcpnode-1000/vcpnode.sock"},
		{"relative values ignored", map[string]string{"RUNTIME_DIRECTORY": "run", "XDG_RUNTIME_DIR": "x", "TMPDIR": "t"}, 42, "/tmp/vcpnode-42/vcpnode.sock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultControlSocket(func(k string) string { return tt.env[k] }, tt.uid); got != tt.want {
				t.Errorf("DefaultControlSocket = %q, want %q", got, tt.want)
			}
		})
	}
}

// ReadControlSocket finds the socket in a config whose other settings are
// wrong, so that `vcpnode reload` still reaches the daemon.
func TestReadControlSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	doc := "[hub]\nurl = \"ftp://nowhere\"\nping_interval = 20\n[control]\nsocket = \"/run/x/s.sock\"\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil {
		t.Fatal("the test config should be invalid")
	}
	got, err := ReadControlSocket(path)
	if err != nil || got != "/run/x/s.sock" {
		t.Fatalf("ReadControlSocket = %q, %v", got, err)
	}
	if got, err := ReadControlSocket(filepath.Join(dir, "missing.toml")); err == nil {
		t.Fatalf("missing file gave %q and no error", got)
	}
}
