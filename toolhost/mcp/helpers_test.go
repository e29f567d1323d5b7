package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

func TestMain(m *testing.M) {
	proctreetest.RunEscapeeIfAsked()
	if kind := os.Getenv(envServerKind); kind != "" {
		runTestServer(kind)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// waitLimit is generous: the machine is shared and the servers run -race.
const waitLimit = 30 * time.Second

type fixture struct {
	t       *testing.T
	host    *Host
	dir     string
	changes chan string
}

func newFixture(t *testing.T, tweak ...func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), changes: make(chan string, 64)}
	o := Options{
		Log:     zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel),
		Environ: os.Environ(),
		Backoff: func(int) time.Duration { return 20 * time.Millisecond },
		OnChange: func(name string) {
			select {
			case f.changes <- name:
			default:
			}
		},
		InitTimeout: waitLimit,
	}
	for _, fn := range tweak {
		fn(&o)
	}
	f.host = NewHost(o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := f.host.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return f
}

// stdio is a server that is this test binary run as kind.
// Its markers go to a folder of its own (see marker).
func (f *fixture) stdio(name, kind string) ServerConfig {
	dir := filepath.Join(f.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		f.t.Fatal(err)
	}
	// A test binary built for coverage warns on stderr, which the server
	// errors quote, when it runs without a place for its counters; in the
	// server's folder, which a confined server may write.
	cover := filepath.Join(dir, "cover")
	if err := os.MkdirAll(cover, 0o700); err != nil {
		f.t.Fatal(err)
	}
	return ServerConfig{Name: name, Command: os.Args[0],
		Env: map[string]string{envServerKind: kind, envMarkerDir: dir, "GOCOVERDIR": cover}}
}

// start applies cfgs and waits for every server's first attempt.
func (f *fixture) start(cfgs ...ServerConfig) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := f.host.Apply(ctx, cfgs); err != nil {
		f.t.Fatalf("apply: %v", err)
	}
	f.host.Wait(ctx)
}

// tool is the current VCP tool named name.
func (f *fixture) tool(name string) *Tool {
	f.t.Helper()
	for _, tl := range f.host.Tools() {
		if tl.Spec().Name == name {
			return tl.(*Tool)
		}
	}
	f.t.Fatalf("no tool %s; status: %+v", name, f.host.Status())
	return nil
}

func (f *fixture) status(name string) Status {
	for _, s := range f.host.Status() {
		if s.Name == name {
			return s
		}
	}
	f.t.Fatalf("no server %s", name)
	return Status{}
}

// call invokes tool with args given as Go values (marshalled to JSON).
func call(ctx context.Context, t *testing.T, tool toolhost.Tool, args map[string]any) (any, error) {
	t.Helper()
	raw := map[string]json.RawMessage{}
	for k, v := range args {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		raw[k] = b
	}
	return tool.Invoke(ctx, toolhost.Call{RequestID: "r1", Args: raw})
}

// resultText is the text parts of a successful result, joined.
func resultText(t *testing.T, v any) string {
	t.Helper()
	r, ok := v.(callResult)
	if !ok {
		t.Fatalf("result is %T, not callResult", v)
	}
	s := ""
	for _, p := range r.Content {
		if p.Type == "text" {
			s += p.Text
		}
	}
	return s
}

// marker is what server's process left under name ("" when nothing).
func (f *fixture) marker(server, name string) string {
	b, _ := os.ReadFile(filepath.Join(f.dir, server, name))
	return string(b)
}

func (f *fixture) waitMarker(server, name string) string {
	f.t.Helper()
	testwait.For(f.t, "marker "+name+" of "+server, func() bool { return f.marker(server, name) != "" })
	return f.marker(server, name)
}

// pid is the process id the server's latest process wrote, as this
// process sees it (a confined server reports its PID namespace's).
func (f *fixture) pid(server string) int {
	f.t.Helper()
	n, err := strconv.Atoi(f.waitMarker(server, "pid"))
	if err != nil {
		f.t.Fatal(err)
	}
	if host := proctreetest.HostPid(n, filepath.Join(f.dir, server)); host != 0 {
		return host
	}
	return n
}

// cancelSlowCall calls the command "slow" of tool, served by the test
// server name, cancels it once the server's handler started, and checks
// that the call returns context.Canceled and that the handler saw the
// cancellation (notifications/cancelled).
func (f *fixture) cancelSlowCall(name string, tool toolhost.Tool) {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := call(ctx, f.t, tool, map[string]any{"command": "slow"})
		done <- err
	}()
	f.waitMarker(name, "started")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			f.t.Errorf("cancelled call: %v", err)
		}
	case <-time.After(waitLimit):
		f.t.Fatal("the cancelled call did not return")
	}
	f.waitMarker(name, "cancelled")
}
