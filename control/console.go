package control

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/console"
	"github.com/vcpnode/vcpnode/controlapi"
)

// The web console ([console] listen): the page and the control socket's
// own /v1/ handlers on a loopback TCP port. The control socket knows its
// caller from SO_PEERCRED; here a one-time token, minted over the socket for
// the daemon's owner, is exchanged for a session cookie, and Host and Origin
// are checked on every request so that no other site (DNS rebinding, CSRF)
// can use the session.

// ConsoleLoginTTL is how long a minted login URL stays valid unused.
const ConsoleLoginTTL = 5 * time.Minute

// Console serves the web console.
type Console struct {
	ctl     *Server
	api     http.Handler // the control socket's routes
	ln      net.Listener
	srv     *http.Server
	done    chan struct{}
	idle    time.Duration
	cookie  string          // the session cookie's name (one per port)
	hosts   map[string]bool // Host header values accepted
	origins map[string]bool // Origin header values accepted
	log     zerolog.Logger
	now     func() time.Time

	mu       sync.Mutex
	tokens   map[string]time.Time // one-time login token → expiry
	sessions map[string]time.Time // session id → last use
}

// ListenConsole serves the console on cfg.Listen until Close, with the
// API of ctl. It returns nil, nil when the console is off.
func ListenConsole(ctl *Server, cfg config.ConsoleConfig, log zerolog.Logger) (*Console, error) {
	if cfg.Listen == "" {
		return nil, nil
	}
	if msg := config.ConsoleListenProblem(cfg.Listen); msg != "" {
		return nil, fmt.Errorf("console.listen: %s", msg)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("console: listen: %w", err)
	}
	// localhost may resolve to anything: what was bound must be loopback.
	addr, _ := ln.Addr().(*net.TCPAddr)
	if addr == nil || !addr.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("console.listen: %q bound %v, which is not a loopback address", cfg.Listen, ln.Addr())
	}
	port := fmt.Sprint(addr.Port)
	idle := cfg.IdleTimeout.D()
	if idle <= 0 {
		idle = config.DefaultConsoleIdle
	}
	c := &Console{
		ctl: ctl, api: ctl.routes(), ln: ln, done: make(chan struct{}), idle: idle,
		cookie: "vcpnode_console_" + port, hosts: map[string]bool{}, origins: map[string]bool{},
		log: log.With().Str("component", "console").Logger(), now: time.Now,
		tokens: map[string]time.Time{}, sessions: map[string]time.Time{},
	}
	for _, h := range []string{net.JoinHostPort(addr.IP.String(), port), "localhost:" + port} {
		c.hosts[h] = true
		c.origins["http://"+h] = true
	}
	c.srv = &http.Server{
		Handler:           c,
		ReadHeaderTimeout: controlReadTimeout,
		ErrorLog:          newStdLog(log, "console"),
	}
	go func() {
		defer close(c.done)
		if err := c.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Error().Err(err).Msg("console stopped serving")
		}
	}()
	ctl.setConsole(c)
	c.log.Info().Str("addr", c.Addr()).Msg("serving the web console; `vcpnode console` prints a login URL")
	return c, nil
}

// Addr is the address listened on (with the real port when Listen said :0).
func (c *Console) Addr() string { return c.ln.Addr().String() }

// Close stops the console; every session ends with it.
func (c *Console) Close(ctx context.Context) error {
	c.ctl.setConsole(nil)
	err := c.srv.Shutdown(ctx)
	if err != nil {
		c.srv.Close()
	}
	<-c.done
	return err
}

// NewLogin mints a one-time login URL.
func (c *Console) NewLogin() controlapi.ConsoleLoginResponse {
	tok := rand.Text()
	c.mu.Lock()
	now := c.now()
	exp := now.Add(ConsoleLoginTTL)
	for t, e := range c.tokens {
		if now.After(e) {
			delete(c.tokens, t)
		}
	}
	c.tokens[tok] = exp
	c.mu.Unlock()
	return controlapi.ConsoleLoginResponse{URL: "http://" + c.Addr() + pathConsoleLoginPage + "?token=" + tok, Expires: exp}
}

const pathConsoleLoginPage = "/login"

// ServeHTTP checks Host and Origin, then routes: the login exchange, the
// API (with a session) and the page.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	if !c.hosts[r.Host] {
		c.refuse(w, r, http.StatusMisdirectedRequest, fmt.Errorf("host %q is not this console's; open http://%s/", r.Host, c.Addr()))
		return
	}
	origin := r.Header.Get("Origin")
	switch {
	case origin != "" && !c.origins[origin]:
		c.refuse(w, r, http.StatusForbidden, fmt.Errorf("origin %q may not use this console", origin))
		return
	case origin == "" && r.Method != http.MethodGet && r.Method != http.MethodHead:
		c.refuse(w, r, http.StatusForbidden, errors.New("a request that changes something must carry this console's Origin"))
		return
	case r.Header.Get("Sec-Fetch-Site") == "cross-site":
		c.refuse(w, r, http.StatusForbidden, errors.New("cross-site requests are refused"))
		return
	}
	switch {
	case r.URL.Path == pathConsoleLoginPage:
		c.login(w, r)
	case r.URL.Path == controlapi.PathConsoleLogin:
		// Minting stays with the control socket, where the caller is known.
		writeError(w, http.StatusForbidden, errors.New("login URLs are minted over the control socket: run vcpnode console"))
	case strings.HasPrefix(r.URL.Path, "/v1/"):
		if !c.session(r) {
			writeError(w, http.StatusUnauthorized, errors.New("not logged in, or the session ended: run vcpnode console for a new login URL"))
			return
		}
		// A session is the daemon's owner, as on the control socket.
		ctx := context.WithValue(r.Context(), peerKey{}, peer{uid: c.ctl.uid})
		c.api.ServeHTTP(w, r.WithContext(ctx))
	default:
		c.page(w, r)
	}
}

func (c *Console) refuse(w http.ResponseWriter, r *http.Request, code int, err error) {
	c.log.Warn().Err(err).Str("path", r.URL.Path).Msg("console request refused")
	writeError(w, code, err)
}

// login exchanges a one-time token for a session cookie.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	c.mu.Lock()
	now := c.now()
	exp, ok := c.tokens[tok]
	delete(c.tokens, tok)
	var sid string
	if ok && !now.After(exp) {
		sid = rand.Text()
		c.sessions[sid] = now
	}
	c.mu.Unlock()
	if sid == "" {
		c.log.Warn().Msg("console login refused: unknown, used or expired token")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintln(w, "This login link is unknown, already used or expired. Run `vcpnode console` for a new one.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: c.cookie, Value: sid, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	c.log.Info().Msg("console session started")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// session says whether r carries a live session, and notes the use.
func (c *Console) session(r *http.Request) bool {
	ck, err := r.Cookie(c.cookie)
	if err != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	last, ok := c.sessions[ck.Value]
	if !ok {
		return false
	}
	if now.Sub(last) > c.idle {
		delete(c.sessions, ck.Value)
		return false
	}
	if r.Header.Get(controlapi.ConsolePollHeader) == "" {
		c.sessions[ck.Value] = now
	}
	return true
}

var consolePage = http.FileServerFS(console.Assets())

func (c *Console) page(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s needs GET", r.URL.Path))
		return
	}
	consolePage.ServeHTTP(w, r)
}
