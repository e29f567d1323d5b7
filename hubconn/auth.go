package hubconn

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
)

// How the key reaches the server (VCPToolBox docs/WEBSOCKET_AUTH_MIGRATION.md):
// in an Authorization: Bearer header on the key-less path, or in the path
// itself (/…/VCP_Key=<key>), the only form servers before the migration take.
const (
	AuthAuto   = "auto"   // the header first, the path when the server does not take it
	AuthHeader = "header" // only the header
	AuthPath   = "path"   // only the path
)

// Endpoint is one server endpoint in both forms.
type Endpoint struct {
	Keyed   *url.URL // the key in the path: never log it
	Keyless *url.URL // the same endpoint without the key
	Key     string   // never log it
}

// Remembered is the way that worked last, shared by a dialer's attempts.
// The zero value remembers in memory only; with File set the way also
// outlives the process (remember.go). Safe for concurrent use.
type Remembered struct {
	// File, if set, keeps the way for the next start of the process, by
	// endpoint (the key-less URL, never the key).
	File string
	// OnSaveError, if set, hears why File could not be written; the way is
	// still remembered in memory.
	OnSaveError func(error)

	mu       sync.Mutex
	way      string
	endpoint string // the key-less URL way worked with
	recalled bool   // the way in use came from File and worked at once
}

// Way is the way that worked last, or "".
func (r *Remembered) Way() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.way
}

// Recalled says whether the way in use was remembered from File (an
// earlier run) and worked at the first try, rather than learned anew.
func (r *Remembered) Recalled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recalled
}

// DialAuth dials e the way mode says and returns the way that worked
// (AuthHeader or AuthPath). In AuthAuto it tries the way that worked last
// first (in this process, else the one mem.File kept from an earlier one;
// the header when none did), and the other one when the server
// refuses the first without an answer or with an HTTP error: a server
// before the migration drops a key-less handshake exactly as it drops a
// wrong key, so only both refused is a refusal. A network failure is not
// retried the other way. Errors are Dial's.
func DialAuth(ctx context.Context, e Endpoint, mode string, mem *Remembered, o Options) (*Conn, string, error) {
	order := []string{AuthHeader, AuthPath}
	switch mode {
	case AuthHeader:
		order = order[:1]
	case AuthPath:
		order = order[1:]
	default:
		if mem != nil && mem.first(e.Keyless.String()) == AuthPath {
			order = []string{AuthPath, AuthHeader}
		}
	}
	var err error
	for i, way := range order {
		opts := o
		u := e.Keyed
		if way == AuthHeader {
			u = e.Keyless
			opts.Header = http.Header{"Authorization": {"Bearer " + e.Key}}
		}
		var c *Conn
		c, err = Dial(ctx, u, opts)
		if err == nil {
			if mem != nil && len(order) > 1 { // a fixed way needs no remembering
				mem.worked(e.Keyless.String(), way, i == 0)
			}
			return c, way, nil
		}
		var refused *RefusedError
		if i == len(order)-1 || ctx.Err() != nil || !errors.Is(err, ErrEmptyHandshake) && !errors.As(err, &refused) {
			break
		}
	}
	return nil, "", err
}
