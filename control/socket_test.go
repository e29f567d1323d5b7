package control

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/testnet"
)

// staleSocket leaves a socket file at path with nothing listening on it.
func staleSocket(t *testing.T, path string) string {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("stale socket not left behind: %v", err)
	}
	return path
}

func TestControlSocketModes(t *testing.T) {
	h := startFake(t)
	base := filepath.Dir(testnet.SocketPath(t))
	path := filepath.Join(base, "new", "s.sock") // the directory does not exist yet
	srv, err := Listen(h.ctx, h.b, Options{Socket: path, Log: h.log})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	for p, want := range map[string]os.FileMode{filepath.Dir(path): 0o700, path: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s has mode %v, want %v", p, got, want)
		}
	}
	if _, err := controlapi.NewControlClient(path).Status(h.ctx); err != nil {
		t.Errorf("status over the new socket: %v", err)
	}
}

func TestControlSocketClaims(t *testing.T) {
	h := startFake(t)
	listen := func(path string) (*Server, error) {
		return Listen(h.ctx, h.b, Options{Socket: path, Log: h.log})
	}

	t.Run("second daemon refused", func(t *testing.T) {
		path := testnet.SocketPath(t)
		first, err := listen(path)
		if err != nil {
			t.Fatal(err)
		}
		defer first.Close(context.Background())
		if _, err := listen(path); !errors.Is(err, ErrControlSocketInUse) || !strings.Contains(err.Error(), path) {
			t.Fatalf("second listen = %v, want ErrControlSocketInUse", err)
		}
		// The first one still answers: the second did not remove its socket.
		if _, err := controlapi.NewControlClient(path).Status(h.ctx); err != nil {
			t.Errorf("first daemon after the refusal: %v", err)
		}
	})
	t.Run("stale socket replaced", func(t *testing.T) {
		path := staleSocket(t, testnet.SocketPath(t))
		srv, err := listen(path)
		if err != nil {
			t.Fatalf("listen over a stale socket: %v", err)
		}
		defer srv.Close(context.Background())
		if _, err := controlapi.NewControlClient(path).Status(h.ctx); err != nil {
			t.Errorf("status: %v", err)
		}
	})

	tests := []struct {
		name  string
		setup func(t *testing.T) string
		want  string
	}{
		{"not a socket", func(t *testing.T) string {
			path := testnet.SocketPath(t)
			if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}, "exists and is not a socket"},
		{"path too long", func(t *testing.T) string {
			return filepath.Join(filepath.Dir(testnet.SocketPath(t)), strings.Repeat("x", 120)+".sock")
		}, "Unix sockets allow 107"},
		{"relative path", func(*testing.T) string { return "vcpnode.sock" }, "not an absolute path"},
		{"directory writable by others", func(t *testing.T) string {
			path := testnet.SocketPath(t)
			if err := os.Chmod(filepath.Dir(path), 0o777); err != nil {
				t.Fatal(err)
			}
			return path
		}, "is writable by other users"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t)
			if srv, err := listen(path); err == nil || !strings.Contains(err.Error(), tt.want) {
				if srv != nil {
					srv.Close(context.Background())
				}
				t.Fatalf("listen(%s) = %v, want an error containing %q", path, err, tt.want)
			}
		})
	}
}

func TestControlSocketDirectoryOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a directory to another user; run the tests as root to cover it")
	}
	h := startFake(t)
	path := testnet.SocketPath(t)
	if err := os.Chown(filepath.Dir(path), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := Listen(h.ctx, h.b, Options{Socket: path, Log: h.log})
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Fatalf("listen in a directory of uid 65534 = %v", err)
	}
}

func TestPeerAllowed(t *testing.T) {
	tests := []struct {
		peer, daemon int
		want         bool
	}{
		{0, 1000, true},
		{1000, 1000, true},
		{1001, 1000, false},
		{0, 0, true},
		{1000, 0, false},
	}
	for _, tt := range tests {
		if got := peerAllowed(tt.peer, tt.daemon); got != tt.want {
			t.Errorf("peerAllowed(%d, %d) = %v, want %v", tt.peer, tt.daemon, got, tt.want)
		}
	}
}

func TestControlClientWhenNothingListens(t *testing.T) {
	path := testnet.SocketPath(t)
	// A socket file with no listener behind it, as a crashed daemon leaves.
	stale := staleSocket(t, path+".stale")
	for _, p := range []string{path, stale} {
		_, err := controlapi.NewControlClient(p).Status(context.Background())
		if !errors.Is(err, controlapi.ErrNotRunning) || err.Error() != "cannot reach vcpnode at "+p+": is it running?" {
			t.Errorf("Status(%s) = %v", p, err)
		}
	}
}
