package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// systemd service credentials (LoadCredential=vcp_key:/etc/vcpnode/key):
// systemd copies the file, readable only by the service's user, into
// $CREDENTIALS_DIRECTORY, so the key file itself can stay root-only.
const (
	// CredentialName is the credential that holds the VCP key.
	CredentialName = "vcp_key"

	envCredentialsDirectory = "CREDENTIALS_DIRECTORY"
)

// CredentialPath is where the key credential would be, or "" when the
// process was given no credentials.
func CredentialPath(getenv func(string) string) string {
	dir := getenv(envCredentialsDirectory)
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, CredentialName)
}

// credentialKey reads the key credential. found is false when there is no
// credentials directory or it has no vcp_key: the unit passes other
// credentials, or none. A credential that exists but is empty or unreadable
// is an error, not a reason to fall back to the config.
func credentialKey(getenv func(string) string) (key, source string, found bool, err error) {
	path := CredentialPath(getenv)
	if path == "" {
		return "", "", false, nil
	}
	source = "credential " + CredentialName + " ($" + envCredentialsDirectory + "/" + CredentialName + ")"
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("%s: %w", source, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	switch {
	case err != nil:
		return "", "", false, fmt.Errorf("%s: read: %w", source, err)
	case len(data) > maxKeyFileBytes:
		return "", "", false, fmt.Errorf("%s is larger than %d bytes: the file given to LoadCredential= should hold only the key", source, maxKeyFileBytes)
	}
	key = strings.TrimSpace(string(data))
	if key == "" {
		return "", "", false, fmt.Errorf("%s is empty: put the VCP key in the file given to LoadCredential=", source)
	}
	return key, source, true, nil
}
