package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testKey looks like a real key so that a leak into messages would be found.
const testKey = "k3y-S3cr3t_vcp.Node~42"

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "  file-key_123 \n")
	empty := write("empty", "\n\t \n")
	bad := write("bad", "file key with spaces\n")
	big := write("big", strings.Repeat("k", maxKeyFileBytes+1))
	missing := filepath.Join(dir, "missing")

	tests := []struct {
		name    string
		env     map[string]string
		key     string
		keyFile string
		want    string
		wantErr error  // checked with errors.Is when set
		errText string // substring of the error when set
	}{
		{name: "env wins", env: map[string]string{EnvKey: " env-key\n"}, key: "inline", keyFile: good, want: "env-key"},
		{name: "inline before file", key: "inline", keyFile: good, want: "inline"},
		{name: "file trimmed", keyFile: good, want: "file-key_123"},
		{name: "blank env ignored", env: map[string]string{EnvKey: "  "}, key: "inline", want: "inline"},
		{name: "none", wantErr: ErrNoKey},
		{name: "missing file", keyFile: missing, wantErr: os.ErrNotExist, errText: "hub.key_file"},
		{name: "empty file", keyFile: empty, errText: "is empty"},
		{name: "big file", keyFile: big, errText: "larger than 4096 bytes"},
		{name: "bad file key", keyFile: bad, wantErr: ErrInvalidKey, errText: "whitespace"},
		{name: "bad env key", env: map[string]string{EnvKey: "env/key"}, wantErr: ErrInvalidKey, errText: EnvKey},
		{name: "bad inline key", key: "in%20line", wantErr: ErrInvalidKey, errText: "hub.key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			c.Hub.Key, c.Hub.KeyFile = tt.key, tt.keyFile
			got, err := c.Key(envOf(tt.env))
			if tt.wantErr == nil && tt.errText == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Key() = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Key() = %q, want an error", got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Key() error %v is not %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("Key() error %q does not mention %q", err, tt.errText)
			}
			for _, secret := range []string{"file key with spaces", "env/key", "in%20line"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("Key() error %q contains the key", err)
				}
			}
		})
	}
}

func TestRedactedConfigHidesTheKey(t *testing.T) {
	c := Default()
	c.Hub.Key = "s3cr3t-key"
	c.Hub.URL = "ws://h:1/vcp-distributed-server/VCP_Key=url-s3cr3t"
	c.Node.ExposedTools = []string{"A"}
	r := c.Redacted()
	out := fmt.Sprintf("%+v", r)
	for _, s := range []string{"s3cr3t-key", "url-s3cr3t"} {
		if strings.Contains(out, s) {
			t.Errorf("Redacted() still shows %q: %s", s, out)
		}
	}
	if r.Hub.Key != "REDACTED" {
		t.Errorf("Redacted().Hub.Key = %q", r.Hub.Key)
	}
	r.Node.ExposedTools[0] = "changed"
	if c.Node.ExposedTools[0] != "A" {
		t.Error("Redacted() shares its slices with the original")
	}
	if Default().Redacted().Hub.Key != "" {
		t.Error("an empty key should stay empty, so that \"not set\" stays visible")
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		url   string
		roots []string
		want  []string
	}{
		{"ws://127.0.0.1:6005", nil, nil},
		{"ws://localhost:6005/", nil, nil},
		{"wss://vcp.example.org", nil, nil},
		{"http://[::1]:6005", nil, nil},
		{"ws://192.0.2.1:6005", nil, []string{"clear text"}},
		{"https://vcp.example.org/vcp/", nil, []string{`path prefix "/vcp"`}},
		{"wss://h", []string{"/srv", "/"}, []string{"files.roots includes /"}},
	}
	for _, tt := range tests {
		c := Default()
		c.Hub.URL, c.Files.Roots = tt.url, tt.roots
		got := c.Warnings()
		if len(got) != len(tt.want) {
			t.Errorf("Warnings(%s, %v) = %q, want %d", tt.url, tt.roots, got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("Warnings(%s)[%d] = %q, want it to mention %q", tt.url, i, got[i], w)
			}
		}
	}
}
