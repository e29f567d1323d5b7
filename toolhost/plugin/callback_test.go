package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/toolhost"
)

// deliveredCallback is one callback the sink received.
type deliveredCallback struct {
	plugin, task string
	body         map[string]any
}

// recordingSink keeps what it is given; err, when set, refuses everything.
type recordingSink struct {
	mu  sync.Mutex
	got []deliveredCallback
	err error
}

func (s *recordingSink) Deliver(_ context.Context, plugin, task string, body json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		return err
	}
	s.got = append(s.got, deliveredCallback{plugin, task, obj})
	return nil
}

func (s *recordingSink) all() []deliveredCallback {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]deliveredCallback(nil), s.got...)
}

func startCallbackServer(t *testing.T, sink CallbackSink) *CallbackServer {
	t.Helper()
	return startCallbackServerLimit(t, sink, MaxCallbackBytes)
}

func startCallbackServerLimit(t *testing.T, sink CallbackSink, maxBody int64) *CallbackServer {
	t.Helper()
	known := func(name string) bool { return name == "VideoGen" || name == "Wan2.1VideoGen" }
	s, err := newCallbackServer(sink, known, zerolog.Nop(), maxBody)
	if err != nil {
		t.Fatalf("NewCallbackServer: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// post sends body to url and returns the status and the decoded JSON answer.
func postCallback(t *testing.T, method, url string, body []byte) (int, map[string]string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var answer map[string]string
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &answer); err != nil {
		t.Fatalf("answer %q is not a JSON object of strings: %v", data, err)
	}
	return resp.StatusCode, answer, resp.Header
}

func TestCallbackAcceptsBothURLShapes(t *testing.T) {
	tests := []struct {
		name, path, body string
		wantPlugin       string
		wantTask         string
	}{
		{"path form", "/VideoGen/task-1", `{"requestId":"task-1","status":"Succeed","message":"ready"}`, "VideoGen", "task-1"},
		{"path form, dotted name", "/Wan2.1VideoGen/abc_9", `{"status":"Failed","reason":"x"}`, "Wan2.1VideoGen", "abc_9"},
		{"path wins over the body", "/VideoGen/t2", `{"pluginName":"Other","taskId":"zzz"}`, "VideoGen", "t2"},
		{"trailing slash", "/VideoGen/t3/", `{}`, "VideoGen", "t3"},
		{"bare, pluginName and taskId", "", `{"pluginName":"VideoGen","taskId":"t4"}`, "VideoGen", "t4"},
		{"bare with slash, PLUGIN_NAME_FOR_CALLBACK and requestId", "/", `{"PLUGIN_NAME_FOR_CALLBACK":"VideoGen","requestId":"t5"}`, "VideoGen", "t5"},
		{"bare, task_id", "", `{"pluginName":"VideoGen","task_id":"t6"}`, "VideoGen", "t6"},
		{"bare, TaskId", "", `{"pluginName":"VideoGen","TaskId":"t7"}`, "VideoGen", "t7"},
		{"bare, integer task id", "", `{"pluginName":"VideoGen","taskId":12345}`, "VideoGen", "12345"},
		{"bare, empty taskId falls through to requestId", "", `{"pluginName":"VideoGen","taskId":"","requestId":"t8"}`, "VideoGen", "t8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &recordingSink{}
			s := startCallbackServer(t, sink)
			status, answer, _ := postCallback(t, http.MethodPost, s.Grant(tt.wantPlugin).URL()+tt.path, []byte(tt.body))
			if status != http.StatusOK || answer["status"] != "success" {
				t.Fatalf("status %d, answer %v", status, answer)
			}
			got := sink.all()
			if len(got) != 1 {
				t.Fatalf("sink got %d callbacks, want 1", len(got))
			}
			d := got[0]
			if d.plugin != tt.wantPlugin || d.task != tt.wantTask {
				t.Errorf("deliveredCallback %s/%s, want %s/%s", d.plugin, d.task, tt.wantPlugin, tt.wantTask)
			}
			if d.body["pluginName"] != tt.wantPlugin || d.body["taskId"] != tt.wantTask {
				t.Errorf("body names = %v/%v, want them filled in as %s/%s", d.body["pluginName"], d.body["taskId"], tt.wantPlugin, tt.wantTask)
			}
			var sent map[string]any
			_ = json.Unmarshal([]byte(tt.body), &sent)
			for k, v := range sent {
				if k == "pluginName" || k == "taskId" {
					continue
				}
				if got, _ := json.Marshal(d.body[k]); string(got) != string(mustValue(json.Marshal(v))) {
					t.Errorf("field %s = %s, want it kept as %v", k, got, v)
				}
			}
		})
	}
}

func mustValue[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestCallbackRefusals(t *testing.T) {
	sinkErr := errors.New("outbox full: 10000 messages are waiting")
	tests := []struct {
		name       string
		method     string
		url        func(base string) string
		body       string
		sinkErr    error
		wantStatus int
		wantError  string
	}{
		{"wrong token", "POST", func(b string) string {
			return b[:strings.LastIndex(b, "/")] + "/WRONGTOKENWRONGTOKENWRONG2/VideoGen/t1"
		}, `{}`, nil, 404, "not found"},
		{"token of another length", "POST", func(b string) string { return b + "x/VideoGen/t1" }, `{}`, nil, 404, "not found"},
		{"no token", "POST", func(b string) string { return b[:strings.LastIndex(b, "/")] }, `{}`, nil, 404, "not found"},
		{"other prefix", "POST", func(b string) string {
			u := mustValue(url.Parse(b))
			return "http://" + u.Host + "/plugin/callback"
		}, `{}`, nil, 404, "not found"},
		{"wrong token, GET", "GET", func(b string) string { return b + "X" }, ``, nil, 404, "not found"},
		{"GET with the token", "GET", func(b string) string { return b + "/VideoGen/t1" }, ``, nil, 405, "use POST"},
		{"bad plugin name", "POST", func(b string) string { return b + "/Video$Gen/t1" }, `{}`, nil, 400, "plugin name"},
		{"plugin name with a space", "POST", func(b string) string { return b + "/Video%20Gen/t1" }, `{}`, nil, 400, "plugin name"},
		{"plugin name ..", "POST", func(b string) string { return b + "/../t1" }, `{}`, nil, 400, "plugin name"},
		{"task id with a dot", "POST", func(b string) string { return b + "/VideoGen/t.1" }, `{}`, nil, 400, "task id"},
		{"bad task id in the body", "POST", func(b string) string { return b }, `{"pluginName":"VideoGen","taskId":"../../etc"}`, nil, 400, "task id"},
		{"encoded slash", "POST", func(b string) string { return b + "/VideoGen/a%2Fb" }, `{}`, nil, 400, "percent-encoded"},
		{"unknown plugin", "POST", func(b string) string { return b + "/Nobody/t1" }, `{}`, nil, 404, `unknown plugin "Nobody"`},
		{"another plugin's task", "POST", func(b string) string { return b + "/Wan2.1VideoGen/t1" }, `{}`, nil, 403, `was given to a run of plugin "VideoGen", not "Wan2.1VideoGen"`},
		{"another plugin's task, bare", "POST", func(b string) string { return b }, `{"pluginName":"Wan2.1VideoGen","taskId":"t1"}`, nil, 403, "was given to a run of plugin"},
		{"too many segments", "POST", func(b string) string { return b + "/VideoGen/t1/extra" }, `{}`, nil, 404, "no such route"},
		{"one segment", "POST", func(b string) string { return b + "/VideoGen" }, `{}`, nil, 404, "no such route"},
		{"bare without names", "POST", func(b string) string { return b }, `{"status":"Succeed"}`, nil, 400, "must name the plugin"},
		{"array body", "POST", func(b string) string { return b + "/VideoGen/t1" }, `[1,2]`, nil, 400, "must be a JSON object"},
		{"string body", "POST", func(b string) string { return b + "/VideoGen/t1" }, `"done"`, nil, 400, "must be a JSON object"},
		{"null body", "POST", func(b string) string { return b + "/VideoGen/t1" }, `null`, nil, 400, "must be a JSON object"},
		{"empty body", "POST", func(b string) string { return b + "/VideoGen/t1" }, ``, nil, 400, "must be a JSON object"},
		{"broken JSON", "POST", func(b string) string { return b + "/VideoGen/t1" }, `{"status":`, nil, 400, "not valid JSON"},
		{"trailing data", "POST", func(b string) string { return b + "/VideoGen/t1" }, `{} {}`, nil, 400, "not valid JSON"},
		{"invalid UTF-8", "POST", func(b string) string { return b + "/VideoGen/t1" }, "{\"m\":\"\xff\"}", nil, 400, "UTF-8"},
		{"sink refuses", "POST", func(b string) string { return b + "/VideoGen/t1" }, `{}`, sinkErr, 503, "outbox full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &recordingSink{err: tt.sinkErr}
			s := startCallbackServer(t, sink)
			status, answer, header := postCallback(t, tt.method, tt.url(s.Grant("VideoGen").URL()), []byte(tt.body))
			if status != tt.wantStatus || answer["status"] != "error" || !strings.Contains(answer["error"], tt.wantError) {
				t.Errorf("got %d %v, want %d with an error containing %q", status, answer, tt.wantStatus, tt.wantError)
			}
			if tt.wantError == "not found" && answer["error"] != "not found" {
				t.Errorf("a request without the token got a hint: %q", answer["error"])
			}
			if tt.wantStatus == 503 && header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			if got := sink.all(); len(got) != 0 {
				t.Errorf("the sink received %v", got)
			}
		})
	}
}

func TestCallbackBodyLimit(t *testing.T) {
	t.Run("the real limit", func(t *testing.T) {
		s, err := NewCallbackServer(&recordingSink{}, func(string) bool { return true }, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		over := []byte(`{"pad":"` + strings.Repeat("a", MaxCallbackBytes) + `"}`)
		status, answer, _ := postCallback(t, "POST", s.Grant("VideoGen").URL()+"/VideoGen/over", over)
		if status != http.StatusRequestEntityTooLarge || !strings.Contains(answer["error"], "larger than 16777216 bytes") {
			t.Errorf("a body of %d bytes: %d %v, want 413", len(over), status, answer)
		}
	})
	t.Run("exactly at the limit", func(t *testing.T) {
		sink := &recordingSink{}
		s := startCallbackServerLimit(t, sink, 1024)
		fit := []byte(`{"pad":"` + strings.Repeat("a", 1024-len(`{"pad":""}`)) + `"}`)
		base := s.Grant("VideoGen").URL()
		if status, answer, _ := postCallback(t, "POST", base+"/VideoGen/fits", fit); status != 200 {
			t.Fatalf("a body of exactly %d bytes: %d %v", len(fit), status, answer)
		}
		over := append([]byte(`{"pad":"a`), fit[len(`{"pad":"`):]...)
		if status, answer, _ := postCallback(t, "POST", base+"/VideoGen/over", over); status != http.StatusRequestEntityTooLarge {
			t.Errorf("a body of %d bytes: %d %v, want 413", len(over), status, answer)
		}
		if got := sink.all(); len(got) != 1 || got[0].task != "fits" {
			t.Errorf("sink got %v, want only the callback that fits", got)
		}
	})
}

func TestCallbackServerIsLoopbackOnlyWithAPrivateToken(t *testing.T) {
	a := startCallbackServer(t, &recordingSink{})
	b := startCallbackServer(t, &recordingSink{})
	aURL, bURL := a.Grant("VideoGen").URL(), b.Grant("VideoGen").URL()
	ua, err := url.Parse(aURL)
	if err != nil {
		t.Fatal(err)
	}
	if ua.Scheme != "http" || ua.Hostname() != "127.0.0.1" || ua.Port() == "" || ua.Port() == "0" {
		t.Errorf("URL %s is not http://127.0.0.1:PORT/…", aURL)
	}
	ip := net.ParseIP(ua.Hostname())
	if ip == nil || !ip.IsLoopback() {
		t.Errorf("host %s is not a loopback address", ua.Hostname())
	}
	token := strings.TrimPrefix(ua.Path, callbackPathPrefix)
	if len(token) < 26 || strings.Contains(token, "/") {
		t.Errorf("token %q is too short to be secret", token)
	}
	if aURL[strings.LastIndex(aURL, "/"):] == bURL[strings.LastIndex(bURL, "/"):] {
		t.Error("two servers share a token")
	}
	// a's token does not open b.
	ub := mustValue(url.Parse(bURL))
	status, _, _ := postCallback(t, "POST", "http://"+ub.Host+ua.Path+"/VideoGen/t1", []byte(`{}`))
	if status != http.StatusNotFound {
		t.Errorf("another server's token got %d, want 404", status)
	}
}

func TestCallbackServerClose(t *testing.T) {
	s, err := NewCallbackServer(&recordingSink{}, func(string) bool { return true }, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	base := s.Grant("VideoGen").URL()
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := http.Post(base+"/VideoGen/t1", "application/json", strings.NewReader(`{}`)); err == nil {
		t.Error("the server still answers after Close")
	}
	if _, err := NewCallbackServer(nil, nil, zerolog.Nop()); err == nil {
		t.Error("NewCallbackServer accepted a nil sink")
	}
}

func TestValidNames(t *testing.T) {
	tests := []struct {
		name   string
		plugin bool
		task   bool
	}{
		{"VideoGen", true, true},
		{"Wan2.1VideoGen", true, false},
		{"task-1_a", true, true},
		{"", false, false},
		{".", false, false},
		{"..", false, false},
		{"a/b", false, false},
		{"a b", false, false},
		{"名字", false, false},
		{strings.Repeat("a", 256), false, false},
	}
	for _, tt := range tests {
		if got := ValidCallbackName(tt.name); got != tt.plugin {
			t.Errorf("ValidCallbackName(%q) = %t, want %t", tt.name, got, tt.plugin)
		}
		if got := ValidTaskID(tt.name); got != tt.task {
			t.Errorf("ValidTaskID(%q) = %t, want %t", tt.name, got, tt.task)
		}
	}
}

// A plugin posting refused callbacks in a loop gets a few log lines and a
// count, not one line each.
func TestCallbackRefusalsAreRateLimitedInTheLog(t *testing.T) {
	var logs testlog.Buffer
	known := func(name string) bool { return name == "VideoGen" }
	s, err := newCallbackServer(&recordingSink{}, known, zerolog.New(&logs), MaxCallbackBytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	const n = 40
	base := s.Grant("VideoGen").URL()
	for i := range n {
		if status, _, _ := postCallback(t, "POST", base+"/Unknown"+strings.Repeat("x", i)+"/t1", []byte(`{}`)); status < 400 {
			t.Fatalf("callback %d for an unknown plugin: status %d", i, status)
		}
	}
	lines := strings.Count(logs.String(), "refused an asynchronous plugin callback")
	if lines != toolhost.WarnBurst {
		t.Errorf("%d refusal lines for %d refused callbacks, want %d", lines, n, toolhost.WarnBurst)
	}
}
