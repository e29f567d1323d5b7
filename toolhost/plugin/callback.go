package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost"
)

// MaxCallbackBytes bounds one callback body. Real callbacks are a status and
// a message; this leaves room for inline data without letting a plugin fill
// the daemon's memory.
const MaxCallbackBytes = 16 << 20

const (
	callbackPathPrefix = "/plugin-callback/"
	// callbacksAtOnce bounds the bodies held in memory at the same time.
	callbacksAtOnce = 4
	callbackRetry   = "5" // seconds, in Retry-After when the sink refused
)

// The main server substitutes {{VCP_ASYNC_RESULT::plugin::task}} only for
// names matching its placeholder regex, and builds a file name from them:
// anything else is useless to the model and unsafe on the server.
var (
	callbackPluginName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	callbackTaskID     = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// ValidCallbackName reports whether name can carry an asynchronous result.
func ValidCallbackName(name string) bool {
	return len(name) <= 255 && callbackPluginName.MatchString(name) && name != "." && name != ".."
}

// ValidTaskID reports whether id can carry an asynchronous result.
func ValidTaskID(id string) bool { return len(id) <= 255 && callbackTaskID.MatchString(id) }

// CallbackSink takes a callback whose body already holds pluginName and
// taskId. It must return only once the message is stored durably: the
// plugin is told "received" after that, and will not send it again.
type CallbackSink interface {
	Deliver(ctx context.Context, pluginName, taskID string, body json.RawMessage) error
}

// CallbackServer receives asynchronous plugins' results on 127.0.0.1. Each
// run of an asynchronous plugin gets a URL of its own (Grant): its random
// token posts only that plugin's results, only for tasks no other run has
// claimed, and only while the run's processes live; names are checked
// before anything is kept.
type CallbackServer struct {
	sink  CallbackSink
	known func(name string) bool
	log   zerolog.Logger
	base  string // http://127.0.0.1:PORT/plugin-callback/
	slots chan struct{}

	grantsMu sync.Mutex
	grants   map[string]*CallbackGrant // by token
	claims   map[string]*CallbackGrant // by plugin "/" task: the run whose task it is
	retired  []string                  // claims of revoked grants, oldest first (bounded)

	// maxBody is MaxCallbackBytes except in tests.
	maxBody int64
	// refusals keeps a plugin posting bad callbacks in a loop from
	// flooding the log.
	refusals *toolhost.WarnLimiter

	srv      *http.Server
	served   chan struct{}
	closeMu  sync.Mutex
	closeErr error
	closed   bool
}

// NewCallbackServer listens on a random loopback port. known reports whether
// a plugin of that name is loaded; callbacks for others are refused.
func NewCallbackServer(sink CallbackSink, known func(name string) bool, log zerolog.Logger) (*CallbackServer, error) {
	return newCallbackServer(sink, known, log, MaxCallbackBytes)
}

func newCallbackServer(sink CallbackSink, known func(name string) bool, log zerolog.Logger, maxBody int64) (*CallbackServer, error) {
	if sink == nil || known == nil {
		return nil, errors.New("callback server: sink and known must not be nil")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("callback server: listen on 127.0.0.1: %w", err)
	}
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok || !addr.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("callback server: listener is on %s, not on loopback; refusing to serve", ln.Addr())
	}
	s := &CallbackServer{
		sink:    sink,
		known:   known,
		log:     log,
		base:    fmt.Sprintf("http://127.0.0.1:%d%s", addr.Port, callbackPathPrefix),
		grants:  make(map[string]*CallbackGrant),
		claims:  make(map[string]*CallbackGrant),
		slots:   make(chan struct{}, callbacksAtOnce),
		maxBody: maxBody,
		served:  make(chan struct{}),

		refusals: toolhost.NewWarnLimiter(toolhost.WarnEvery, toolhost.WarnBurst, time.Now),
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      time.Minute,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          stdlog.New(io.Discard, "", 0),
	}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln) // ends with ErrServerClosed on Close
	}()
	return s, nil
}

// Close stops listening and waits for callbacks being received, until ctx
// ends; then it drops the rest.
func (s *CallbackServer) Close(ctx context.Context) error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return s.closeErr
	}
	s.closed = true
	if err := s.srv.Shutdown(ctx); err != nil {
		s.closeErr = fmt.Errorf("callback server: %w", err)
		s.srv.Close()
	}
	<-s.served
	return s.closeErr
}

// callbackError is an answer other than 200, with the text the plugin sees.
type callbackError struct {
	status int
	msg    string
}

func (e *callbackError) Error() string { return e.msg }

func refuseCallback(status int, format string, args ...any) *callbackError {
	return &callbackError{status: status, msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP accepts POST <base>/{plugin}/{taskId} and POST <base>, where
// <base> is a grant's URL.
func (s *CallbackServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, callbackPathPrefix)
	token, tail, _ := strings.Cut(rest, "/")
	g := s.granted(token)
	if !ok || g == nil {
		// No hint: whoever lacks the token learns nothing about the routes.
		writeCallbackJSON(w, http.StatusNotFound, map[string]string{"status": "error", "error": "not found"})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeCallbackJSON(w, http.StatusMethodNotAllowed, map[string]string{"status": "error", "error": "use POST"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
	plugin, task, err := s.receive(r, g, tail)
	if err != nil {
		var ce *callbackError
		if !errors.As(err, &ce) {
			ce = refuseCallback(http.StatusServiceUnavailable, "%s", err)
			w.Header().Set("Retry-After", callbackRetry)
		}
		s.refusals.Warn(s.log, "callback-refused", func(e *zerolog.Event) {
			e.Str("plugin", clipLog(plugin)).Str("task_id", clipLog(task)).Int("status", ce.status).Str("reason", clipLog(ce.msg)).
				Msg("refused an asynchronous plugin callback")
		})
		writeCallbackJSON(w, ce.status, map[string]string{"status": "error", "error": ce.msg})
		return
	}
	writeCallbackJSON(w, http.StatusOK, map[string]string{
		"status":  "success",
		"message": "Callback received; the node forwards it to the main server.",
	})
}

// clipLog bounds a value a plugin chose (a name, a task id) in a log line.
func clipLog(v string) string {
	const max = 128
	if len(v) <= max {
		return v
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + "…"
}

// receive checks and stores one callback. A *callbackError is the plugin's
// fault; any other error is the sink's, and worth retrying.
func (s *CallbackServer) receive(r *http.Request, g *CallbackGrant, tail string) (plugin, task string, err error) {
	if r.URL.RawPath != "" {
		return "", "", refuseCallback(http.StatusBadRequest, "the path must not contain percent-encoded characters")
	}
	fromPath := false
	switch parts := strings.Split(strings.TrimSuffix(tail, "/"), "/"); {
	case tail == "" || tail == "/":
	case len(parts) == 2 && parts[0] != "" && parts[1] != "":
		plugin, task, fromPath = parts[0], parts[1], true
	default:
		return "", "", refuseCallback(http.StatusNotFound, "no such route: POST to the base URL followed by /{pluginName}/{taskId}, or to the base URL itself")
	}

	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-r.Context().Done():
		return plugin, task, r.Context().Err()
	}
	obj, err := readCallbackBody(r, s.maxBody)
	if err != nil {
		return plugin, task, err
	}
	if !fromPath {
		plugin = firstNameField(obj, "pluginName", "PLUGIN_NAME_FOR_CALLBACK")
		task = firstNameField(obj, "taskId", "task_id", "TaskId", "requestId")
		if plugin == "" || task == "" {
			return plugin, task, refuseCallback(http.StatusBadRequest, "posted to the base URL, so the body must name the plugin (pluginName) and the task (taskId or requestId); or post to the base URL followed by /{pluginName}/{taskId}")
		}
	}
	switch {
	case !ValidCallbackName(plugin):
		return plugin, task, refuseCallback(http.StatusBadRequest, "plugin name %q is not made of letters, digits and ._- only", clipName(plugin))
	case !ValidTaskID(task):
		return plugin, task, refuseCallback(http.StatusBadRequest, "task id %q is not made of letters, digits and _- only", clipName(task))
	case !s.known(plugin):
		return plugin, task, refuseCallback(http.StatusNotFound, "unknown plugin %q: it is not loaded on this node", plugin)
	case plugin != g.plugin:
		return plugin, task, refuseCallback(http.StatusForbidden, "this callback URL was given to a run of plugin %q, not %q", g.plugin, plugin)
	case !g.Claim(task):
		return plugin, task, refuseCallback(http.StatusForbidden, "task %q of plugin %q belongs to another run", task, plugin)
	}
	// The main server reads both names from the body only.
	obj["pluginName"], _ = json.Marshal(plugin)
	obj["taskId"], _ = json.Marshal(task)
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return plugin, task, refuseCallback(http.StatusBadRequest, "the body cannot be re-encoded: %v", err)
	}
	if err := s.sink.Deliver(r.Context(), plugin, task, bytes.TrimSpace(body.Bytes())); err != nil {
		return plugin, task, fmt.Errorf("the node could not store the callback, try again later: %w", err)
	}
	s.log.Info().Str("plugin", plugin).Str("task_id", task).Int("bytes", body.Len()).Msg("asynchronous plugin result received")
	return plugin, task, nil
}

func readCallbackBody(r *http.Request, limit int64) (map[string]json.RawMessage, error) {
	data, err := io.ReadAll(r.Body) // bounded by ServeHTTP
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, refuseCallback(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", limit)
	case err != nil:
		return nil, refuseCallback(http.StatusBadRequest, "reading the body: %v", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, refuseCallback(http.StatusBadRequest, "the body must be a JSON object")
	}
	if !utf8.Valid(data) {
		return nil, refuseCallback(http.StatusBadRequest, "the body is not valid UTF-8")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, refuseCallback(http.StatusBadRequest, "the body is not valid JSON: %v", err)
	}
	return obj, nil
}

// firstNameField returns the first of keys holding a non-empty string or an
// integer (the server would accept either), as a string.
func firstNameField(obj map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		raw, ok := obj[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
	}
	return ""
}

func clipName(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func writeCallbackJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
