package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vcpnode/vcpnode/config"
)

// ErrControlSocketInUse: another daemon answers on the control socket.
var ErrControlSocketInUse = errors.New("another vcpnode is already running")

// errPeerUnknown: the platform cannot tell who is on the other end.
var errPeerUnknown = errors.New("peer credentials are not available on this platform")

// probeTimeout bounds the check of an existing socket file.
const probeTimeout = 2 * time.Second

// listenControlSocket makes the socket's directory (0700) if needed,
// replaces a stale socket, refuses to take over a live one or a file that is
// not a socket, and listens with mode 0600.
func listenControlSocket(ctx context.Context, path string, gid int) (*net.UnixListener, error) {
	switch {
	case !filepath.IsAbs(path):
		return nil, fmt.Errorf("control socket %q: not an absolute path", path)
	case len(path) > config.MaxSocketPathBytes:
		return nil, fmt.Errorf("control socket %s: the path is %d bytes long and Unix sockets allow %d; set [control] socket or --socket to a shorter path",
			path, len(path), config.MaxSocketPathBytes)
	}
	dir := filepath.Dir(path)
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("control socket: make its directory: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) && gid >= 0 {
		// A directory made here may let the group in; an existing one is
		// left as its owner set it (groupCannotReach warns).
		if err := shareWithGroup(dir, 0o750, gid); err != nil {
			return nil, fmt.Errorf("control socket: %w", err)
		}
	}
	if err := checkSocketDir(dir); err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	if err := claimSocketPath(ctx, path); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("control socket: listen: %w", err)
	}
	// The socket's mode is the first guard (write endpoints also check the
	// peer's uid). The directory is usually private as well.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if gid >= 0 {
		if err := shareWithGroup(path, 0o660, gid); err != nil {
			ln.Close()
			return nil, fmt.Errorf("control socket: %w", err)
		}
	}
	return ln, nil
}

// claimSocketPath makes path free to listen on: nothing there, or a stale
// socket left by a daemon that did not exit cleanly (removed).
func claimSocketPath(ctx context.Context, path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("control socket %s: the path exists and is not a socket; remove it or set [control] socket to another path", path)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err == nil {
		conn.Close()
		return fmt.Errorf("%w: a daemon answers on %s (vcpnode status shows it); stop it first, or give this one another [control] socket", ErrControlSocketInUse, path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("control socket %s exists and cannot be checked: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("control socket: remove the stale socket: %w", err)
	}
	return nil
}
