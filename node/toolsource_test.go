package node_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/internal/testlog"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolsource"
)

// toySource is a tool source written outside package node, as a new kind
// of tools would be: one tool per [tools.NAME] table whose name starts
// with its prefix, plus the tools it learns while in force (live).
type toySource struct {
	prefix string

	mu        sync.Mutex
	tools     []toolhost.Tool // committed
	live      []string
	env       toolsource.Env
	commits   int
	discards  int
	closes    int
	refuseFor string // a tool name whose table makes Prepare refuse the config
}

func (s *toySource) Prepare(cfg config.Config, env toolsource.Env) (toolsource.Prepared, error) {
	var names []string
	for name := range cfg.Tools {
		if name == s.refuseFor {
			return nil, fmt.Errorf("toy %s: %s is not a toy", s.prefix, name)
		}
		if strings.HasPrefix(name, s.prefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	s.mu.Lock()
	s.env = env
	names = append(names, s.live...)
	s.mu.Unlock()
	return &toyPrepared{s: s, names: names}, nil
}

func (s *toySource) Tools() []toolhost.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

func (s *toySource) Status(st *controlapi.StatusResponse) {
	st.Sources = append(st.Sources, controlapi.ToolSourceStatus{Name: "toy " + s.prefix, Summary: fmt.Sprintf("%d tools", len(s.Tools()))})
}

func (s *toySource) Close(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closes++
	return nil
}

// learn adds a tool while in force and tells the node.
func (s *toySource) learn(name string) {
	s.mu.Lock()
	s.live = append(s.live, name)
	changed := s.env.Changed
	s.mu.Unlock()
	changed()
}

func (s *toySource) counts() (commits, discards, closes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits, s.discards, s.closes
}

type toyPrepared struct {
	s     *toySource
	names []string
}

func (p *toyPrepared) Specs() []toolhost.Spec {
	specs := make([]toolhost.Spec, len(p.names))
	for i, n := range p.names {
		specs[i] = toyTool{n}.Spec()
	}
	return specs
}

func (p *toyPrepared) Commit(func(string) bool) []string {
	tools := make([]toolhost.Tool, len(p.names))
	for i, n := range p.names {
		tools[i] = toyTool{n}
	}
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	p.s.tools = tools
	p.s.commits++
	return nil
}

func (p *toyPrepared) Discard() {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	p.s.discards++
}

type toyTool struct{ name string }

func (t toyTool) Spec() toolhost.Spec {
	return toolhost.Spec{Name: t.name, Description: "A toy.", Source: "toy", DistributedExposed: true,
		Commands: []toolhost.Command{{Command: t.name, Description: "Answers that it is a toy."}}}
}

func (t toyTool) Invoke(context.Context, toolhost.Call) (any, error) {
	return t.name + " is a toy", nil
}

// TestToolSourceIsItsPackagePlusOneLine: a source defined outside package
// node joins with one option, and the node drives its whole lifecycle:
// its tools are registered and called, its status shown, a refused
// reload (by it, by another source, or by a name clash between them)
// discards every prepared part and keeps the tools in force, a change it
// reports is taken in, and it is closed once when Run ends.
func TestToolSourceIsItsPackagePlusOneLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const key = "k3y-S3cr3t_vcp.Toy~1"
	hub, err := demohub.Start(demohub.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	cfg := config.Default()
	cfg.Hub.URL, cfg.Hub.Key, cfg.Hub.Name = hub.BaseURL(), key, "toy-node"
	cfg.Tools = map[string]config.ToolConfig{"ToyA": {}}
	stateDir := t.TempDir()
	getenv := func(name string) string {
		if name == "STATE_DIRECTORY" {
			return stateDir
		}
		return ""
	}
	toy := &toySource{prefix: "Toy"}
	pet := &toySource{prefix: "ToyC", refuseFor: "ToyBad"} // ToyC is toy's too: a clash
	logs := &testlog.Buffer{}
	n, err := node.New(cfg, zerolog.New(logs), node.WithGetenv(getenv),
		node.WithToolSource(toy), // the one line
		node.WithToolSource(pet))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- n.Run(runCtx) }()
	defer func() {
		if t.Failed() {
			t.Logf("node log:\n%s", logs.String())
		}
	}()

	conn, err := hub.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Call(ctx, "ToyA", nil)
	if err != nil || !strings.Contains(string(res.Result), "ToyA is a toy") {
		t.Fatalf("call ToyA = %s, %v", res.Result, err)
	}
	if got := n.Status().Sources; !slices.Contains(got, controlapi.ToolSourceStatus{Name: "toy Toy", Summary: "1 tools"}) {
		t.Errorf("status sources = %+v", got)
	}

	tools := func() []string {
		var names []string
		for _, ti := range n.Tools() {
			names = append(names, ti.Spec.Name)
		}
		return names
	}
	refused := func(what string, tables ...string) {
		t.Helper()
		c := withTools(cfg, tables...)
		_, toyDiscards, _ := toy.counts()
		_, petDiscards, _ := pet.counts()
		if _, err := n.Reload(c); err == nil {
			t.Fatalf("%s: the reload was accepted", what)
		}
		_, toyNow, _ := toy.counts()
		_, petNow, _ := pet.counts()
		// A source that refused has nothing to discard.
		if what != "a source refuses" {
			petDiscards++
		}
		if toyNow != toyDiscards+1 || petNow != petDiscards {
			t.Errorf("%s: discards toy %d→%d, pet %d→%d", what, toyDiscards, toyNow, petDiscards, petNow)
		}
		if got := tools(); !slices.Contains(got, "ToyA") {
			t.Errorf("%s: the tools in force changed: %q", what, got)
		}
	}
	refused("a source refuses", "ToyA", "ToyBad")
	refused("two sources offer one name", "ToyA", "ToyC")

	commits, _, _ := toy.counts()
	if _, err := n.Reload(withTools(cfg, "ToyB")); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if c, _, _ := toy.counts(); c != commits+1 {
		t.Errorf("commits %d→%d", commits, c)
	}
	if got := tools(); !slices.Contains(got, "ToyB") || slices.Contains(got, "ToyA") {
		t.Errorf("after the reload: %q", got)
	}

	toy.learn("ToyLive")
	if !testwait.Poll(ctx, func() bool { return slices.Contains(tools(), "ToyLive") }) {
		t.Fatalf("the change the toy reported was not taken in: %q", tools())
	}

	stop()
	if err := <-stopped; err != nil {
		t.Fatalf("Run = %v", err)
	}
	for _, s := range []*toySource{toy, pet} {
		if _, _, closes := s.counts(); closes != 1 {
			t.Errorf("toy %s closed %d times", s.prefix, closes)
		}
	}
}

func withTools(cfg config.Config, names ...string) config.Config {
	cfg.Tools = map[string]config.ToolConfig{}
	for _, n := range names {
		cfg.Tools[n] = config.ToolConfig{}
	}
	return cfg
}
