package controltest

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
)

// Server is a listening control server, as control.Listen returns it.
type Server interface {
	Socket() string
	Close(ctx context.Context) error
}

// Connect returns a client of srv. When the test ends it closes both and
// fails the test if srv's close failed or left its socket file behind.
func Connect(t testing.TB, srv Server) *controlapi.ControlClient {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("close control server: %v", err)
		}
		if _, err := os.Lstat(srv.Socket()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket file left behind after Close: %v", err)
		}
	})
	c := controlapi.NewControlClient(srv.Socket())
	t.Cleanup(c.Close)
	return c
}
