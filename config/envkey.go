package config

import (
	"os"
	"strings"
)

// TakeEnvKey returns $VCPNODE_KEY and removes it from this process's
// environment, so that nothing started later (plugins, hooks) inherits it
// and no other process of the user can read it there.
//
// os.Unsetenv alone is not enough: it changes Go's copy of the environment,
// while /proc/<pid>/environ shows the block the process started with to
// every process of the same user, plugins included. On Linux the value is
// overwritten in that block too (envkey_linux.go); the error says when that
// failed, and the key is returned all the same. The daemon calls this once
// at start and keeps the value.
func TakeEnvKey() (string, error) {
	val, ok := os.LookupEnv(EnvKey)
	if !ok {
		return "", nil
	}
	_ = os.Unsetenv(EnvKey) // cannot fail for a valid name
	if strings.TrimSpace(val) == "" {
		return val, nil
	}
	return val, wipeInitialEnv(EnvKey)
}
