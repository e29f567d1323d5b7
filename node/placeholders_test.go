package node

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/wsproto"
)

// chanSource prints whatever the test sends it, one output per run.
type chanSource struct {
	keys    []string
	outputs chan string
}

func (c *chanSource) Name() string           { return "test source" }
func (c *chanSource) Placeholders() []string { return c.keys }
func (c *chanSource) Run(ctx context.Context) (placeholders.Output, error) {
	select {
	case v := <-c.outputs:
		return placeholders.Output{Text: v}, nil
	case <-ctx.Done():
		return placeholders.Output{}, ctx.Err()
	}
}

type placeholderRig struct {
	t    *testing.T
	ctx  context.Context
	hub  *demohub.Hub
	node *Node
	logs *testlog.Buffer
	cfg  config.Config
	src  *chanSource
}

// startPlaceholderRig runs a node with a fixed value and a test source
// against a fake hub that is down until the fixed value is in the store, so
// that the first snapshot is known.
func startPlaceholderRig(t *testing.T) *placeholderRig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	hub, err := demohub.Start(demohub.Options{Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	hub.Stop(ctx)

	cfg := config.Default()
	cfg.Hub.URL, cfg.Hub.Key, cfg.Hub.Name = hub.BaseURL(), testKey, "test-node"
	cfg.Placeholders.PushInterval = config.Duration(100 * time.Millisecond)
	cfg.Placeholders.MinInterval = 0
	cfg.Placeholders.Values = map[string]string{"Owner": "Alice"}
	src := &chanSource{keys: []string{"Dyn", "{{Dyn2}}"}, outputs: make(chan string)}
	every, err := placeholders.Every(5 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	jobs := func(config.Config, zerolog.Logger) ([]placeholders.Job, []string, error) {
		return []placeholders.Job{{Source: src, Schedule: every, Fingerprint: "test"}}, nil, nil
	}
	logs := &testlog.Buffer{}
	n, err := New(cfg, zerolog.New(logs).Level(zerolog.DebugLevel), withTimings(testTimings()), WithGetenv(noEnv(t)),
		WithPlaceholderSource(jobs), WithLocalIPs(func() ([]string, error) { return []string{"192.0.2.10"}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("Run did not return")
		}
	})
	r := &placeholderRig{t: t, ctx: ctx, hub: hub, node: n, logs: logs, cfg: cfg, src: src}
	r.waitEntry("Owner", func(e placeholders.Entry) bool { return e.Value == "Alice" })
	if err := hub.Resume(); err != nil {
		t.Fatal(err)
	}
	return r
}

// waitEntry polls the store with a deadline until ok holds for key.
func (r *placeholderRig) waitEntry(key string, ok func(placeholders.Entry) bool) placeholders.Entry {
	r.t.Helper()
	for {
		e, _ := r.node.ph.Store().Entry(key)
		if ok(e) {
			return e
		}
		select {
		case <-r.ctx.Done():
			r.t.Fatalf("%s never got there: %+v", key, e)
		case <-time.After(time.Millisecond):
		}
	}
}

func (r *placeholderRig) print(v string) {
	r.t.Helper()
	select {
	case r.src.outputs <- v:
	case <-r.ctx.Done():
		r.t.Fatal("the test source never ran")
	}
}

func (r *placeholderRig) accept() *demohub.Conn {
	r.t.Helper()
	c, err := r.hub.Accept(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// nextPush waits for the next update_static_placeholders and checks it.
func (r *placeholderRig) nextPush(c *demohub.Conn, want map[string]string) {
	r.t.Helper()
	m, err := c.WaitType(r.ctx, wsproto.TypeUpdateStaticPlaceholders)
	if err != nil {
		r.t.Fatal(err)
	}
	u := m.(wsproto.UpdateStaticPlaceholders)
	if !maps.Equal(u.Placeholders, want) || u.ServerName != "test-node" {
		r.t.Fatalf("pushed %v (serverName %q), want %v", u.Placeholders, u.ServerName, want)
	}
}

func pushes(c *demohub.Conn) (n int, types []wsproto.Type) {
	for _, f := range c.Received() {
		if f.Msg == nil {
			continue
		}
		types = append(types, f.Msg.MessageType())
		if f.Msg.MessageType() == wsproto.TypeUpdateStaticPlaceholders {
			n++
		}
	}
	return n, types
}

func TestPlaceholdersThroughTheHub(t *testing.T) {
	r := startPlaceholderRig(t)

	// Connect: the snapshot follows register_tools and report_ip.
	c1 := r.accept()
	r.nextPush(c1, map[string]string{"{{Owner}}": "Alice"})
	if _, types := pushes(c1); len(types) < 3 || types[0] != wsproto.TypeRegisterTools ||
		types[1] != wsproto.TypeReportIP || types[2] != wsproto.TypeUpdateStaticPlaceholders {
		t.Fatalf("frames in order %v", types)
	}

	// A change: only the changed key goes out.
	r.print("d1")
	r.nextPush(c1, map[string]string{"{{Dyn}}": "d1", "{{Dyn2}}": "d1"})

	// The same value again is no change and no push; the next change
	// proves nothing was sent in between.
	before, _ := r.node.ph.Store().Entry("Dyn")
	r.print("d1")
	r.waitEntry("Dyn", func(e placeholders.Entry) bool { return e.UpdatedAt.After(before.UpdatedAt) })
	// Both keys change in one run: one coalesced push.
	r.print(`{"Dyn":"d2","{{Dyn2}}":"e2"}`)
	r.nextPush(c1, map[string]string{"{{Dyn}}": "d2", "{{Dyn2}}": "e2"})
	if n, _ := pushes(c1); n != 3 {
		t.Fatalf("%d pushes on the first connection, want 3 (snapshot, d1, d2)", n)
	}

	// Reconnect: the whole snapshot again.
	c1.Drop()
	c2 := r.accept()
	r.nextPush(c2, map[string]string{"{{Owner}}": "Alice", "{{Dyn}}": "d2", "{{Dyn2}}": "e2"})

	// A reload that changes a value pushes the change, without reconnecting.
	cfg := r.cfg
	cfg.Placeholders.Values = map[string]string{"Owner": "Bob"}
	rep, err := r.node.Reload(cfg)
	if err != nil || rep.Reconnected || !strings.Contains(strings.Join(rep.Changed, ","), "placeholders") {
		t.Fatalf("Reload = %+v, %v", rep, err)
	}
	r.nextPush(c2, map[string]string{"{{Owner}}": "Bob"})

	// A reload that removes a key reconnects: the server forgets a node's
	// keys only when it disconnects.
	cfg.Placeholders.Values = nil
	rep, err = r.node.Reload(cfg)
	if err != nil || !rep.Reconnected {
		t.Fatalf("Reload = %+v, %v; want a reconnect", rep, err)
	}
	c3 := r.accept()
	r.nextPush(c3, map[string]string{"{{Dyn}}": "d2", "{{Dyn2}}": "e2"})
	if !strings.Contains(r.logs.String(), "placeholders removed by the reload") {
		t.Errorf("the reconnect was not explained in the log:\n%s", r.logs.String())
	}

	status := r.node.Placeholders()
	if len(status.Placeholders) != 2 || status.Placeholders[1].Key != "{{Dyn}}" || status.Placeholders[1].Source != "test source" {
		t.Fatalf("status = %+v", status)
	}
}

func TestPlaceholdersControlEndpoint(t *testing.T) {
	h := startHarness(t, harnessOpt{config: func(c *config.Config) {
		c.Placeholders.Values = map[string]string{"DevBoxOwner": "Alice"}
		c.Placeholders.Command = []config.CommandPlaceholderConfig{{Name: "Broken", Command: "echo 'no repo' >&2; exit 2"}}
	}})
	_, client := startControl(t, h, "")
	for {
		resp, err := client.Placeholders(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Sorted by key: {{Broken}} first. A run is in the store before its
		// source's stats say it ended (refresher.apply): wait for both.
		if len(resp.Placeholders) == 2 && resp.Placeholders[0].LastError != "" && resp.Placeholders[1].HasValue &&
			len(resp.Sources) == 2 && !resp.Sources[0].Running && !resp.Sources[1].Running {
			broken, owner := resp.Placeholders[0], resp.Placeholders[1]
			if owner.Key != "{{DevBoxOwner}}" || owner.Value != "Alice" || owner.Source != "value DevBoxOwner" || owner.UpdatedAt == nil {
				t.Fatalf("owner = %+v", owner)
			}
			if broken.Key != "{{Broken}}" || broken.HasValue || !strings.Contains(broken.LastError, "exited with status 2: no repo") || broken.ErrorAt == nil {
				t.Fatalf("broken = %+v", broken)
			}
			if len(resp.Sources) != 2 || resp.Sources[0].Name != "value DevBoxOwner" || resp.Sources[0].Runs != 1 ||
				resp.Sources[1].Name != "command Broken" || resp.Sources[1].LastError == "" || resp.Sources[1].NextRun != nil {
				t.Fatalf("sources = %+v", resp.Sources)
			}
			return
		}
		select {
		case <-h.ctx.Done():
			t.Fatalf("placeholders never settled: %+v", resp)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
