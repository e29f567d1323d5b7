package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigKeyPrecedenceWithCredentials(t *testing.T) {
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds")
	noKeyCreds := filepath.Join(dir, "other-creds") // a credentials directory without vcp_key
	emptyCreds := filepath.Join(dir, "empty-creds")
	badCreds := filepath.Join(dir, "bad-creds")
	for d, content := range map[string]string{creds: "cred-key\n", emptyCreds: " \n", badCreds: "cred key"} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, CredentialName), []byte(content), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(noKeyCreds, 0o700); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("file-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		env      map[string]string
		inline   string
		keyFile  string
		want     string
		errText  string
		errIsKey bool
	}{
		{name: "environment beats the credential", env: map[string]string{EnvKey: "env-key", envCredentialsDirectory: creds}, inline: "inline", want: "env-key"},
		{name: "credential beats hub.key", env: map[string]string{envCredentialsDirectory: creds}, inline: "inline", keyFile: keyFile, want: "cred-key"},
		{name: "credential beats hub.key_file", env: map[string]string{envCredentialsDirectory: creds}, keyFile: keyFile, want: "cred-key"},
		{name: "credentials without vcp_key fall through", env: map[string]string{envCredentialsDirectory: noKeyCreds}, keyFile: keyFile, want: "file-key"},
		{name: "no credentials directory", keyFile: keyFile, want: "file-key"},
		{name: "empty credential", env: map[string]string{envCredentialsDirectory: emptyCreds}, keyFile: keyFile, errText: "credential vcp_key ($CREDENTIALS_DIRECTORY/vcp_key) is empty"},
		{name: "environment hides a broken credential", env: map[string]string{EnvKey: "env-key", envCredentialsDirectory: emptyCreds}, want: "env-key"},
		{name: "bad credential key", env: map[string]string{envCredentialsDirectory: badCreds}, errText: "credential vcp_key", errIsKey: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			c.Hub.Key, c.Hub.KeyFile = tt.inline, tt.keyFile
			got, err := c.Key(envOf(tt.env))
			if tt.errText == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Key() = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errText) {
				t.Fatalf("Key() = %q, %v; want an error mentioning %q", got, err, tt.errText)
			}
			if errors.Is(err, ErrInvalidKey) != tt.errIsKey {
				t.Errorf("errors.Is(%v, ErrInvalidKey) = %v", err, !tt.errIsKey)
			}
			if strings.Contains(err.Error(), "cred key") {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

func TestCredentialPath(t *testing.T) {
	if got := CredentialPath(envOf(nil)); got != "" {
		t.Errorf("CredentialPath without $CREDENTIALS_DIRECTORY = %q", got)
	}
	if got := CredentialPath(envOf(map[string]string{envCredentialsDirectory: "/run/credentials/vcpnode.service"})); got != "/run/credentials/vcpnode.service/vcp_key" {
		t.Errorf("CredentialPath = %q", got)
	}
}

func TestPermissionWarnings(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// Chmod after writing: the umask must not decide the test.
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name       string
		configMode os.FileMode
		inlineKey  bool
		keyMode    os.FileMode // 0: no key file
		want       []string    // in order
	}{
		{name: "private files", configMode: 0o600, inlineKey: true, keyMode: 0o600},
		{name: "readable config without a key", configMode: 0o644},
		{name: "key file readable by everyone", configMode: 0o644, keyMode: 0o604,
			want: []string{"key-604 holds the key and is readable by everyone (mode 0604): run chmod 600 "}},
		{name: "key file readable by the group", configMode: 0o600, keyMode: 0o640,
			want: []string{"key-640 holds the key and is readable by its group (mode 0640)"}},
		{name: "inline key in a readable config", configMode: 0o644, inlineKey: true,
			want: []string{"config-644 holds the key and is readable by its group and everyone (mode 0644)"}},
		{name: "config writable by the group", configMode: 0o664,
			want: []string{"config-664 is writable by its group (mode 0664)"}},
		{name: "config writable by everyone", configMode: 0o602,
			want: []string{"config-602 is writable by everyone (mode 0602): they could change what this node exposes; run chmod go-w "}},
		{name: "everything open", configMode: 0o666, inlineKey: true, keyMode: 0o644,
			want: []string{"config-666 holds the key", "config-666 is writable", "key-644 holds the key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			config := file("config-"+modeName(tt.configMode), tt.configMode)
			if tt.inlineKey {
				cfg.Hub.Key = "k"
			}
			if tt.keyMode != 0 {
				cfg.Hub.KeyFile = file("key-"+modeName(tt.keyMode), tt.keyMode)
			}
			got := PermissionWarnings(config, cfg)
			if len(got) != len(tt.want) {
				t.Fatalf("PermissionWarnings() = %q, want %d warnings", got, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
	if got := PermissionWarnings(filepath.Join(dir, "missing"), Default()); len(got) != 0 {
		t.Errorf("a missing config gave warnings: %q", got)
	}
}

func modeName(m os.FileMode) string { return fmt.Sprintf("%03o", m.Perm()) }
