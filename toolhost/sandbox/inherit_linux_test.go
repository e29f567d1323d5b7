package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestCommandGetsOnlyItsFds: a descriptor the daemon holds without
// close-on-exec (one it inherited, or a library opened so) never reaches a
// confined command, started cold or by a launcher that waited: the
// command holds exactly stdin, stdout and stderr.
func TestCommandGetsOnlyItsFds(t *testing.T) {
	e := newConfinedEnv(t, nil)
	path := filepath.Join(t.TempDir(), "held")
	if err := os.WriteFile(path, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	// syscall.Open, unlike os.Open, leaves close-on-exec off.
	fd, err := syscall.Open(path, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	const list = `for f in /proc/$$/fd/*; do [ -e "$f" ] && printf "%s " "${f##*/}"; done; true`
	for _, mode := range []string{"cold", "pooled"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "pooled" {
				e.prime(t)
			}
			out, stderr, code := e.sh(t, Default, list)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := strings.Fields(out)
			slices.SortFunc(got, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
			if !slices.Equal(got, []string{"0", "1", "2"}) {
				t.Errorf("the command holds fds %v, want 0 1 2 (the daemon's fd %s must not pass)", got, strconv.Itoa(fd))
			}
		})
	}
}
