package plugins

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
	"github.com/vcpnode/vcpnode/toolsource"
)

const weatherManifest = `{"name":"Weather","pluginType":"static","entryPoint":{"command":"echo sunny"},
"communication":{"protocol":"stdio","timeout":5000},"capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{Weather}}"}]}}`

// newSource is the source as the node makes it, with its own process
// trees and sandbox, closed when the test ends.
func newSource(t *testing.T) *Source {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not on PATH; the plugins here are shell scripts")
	}
	sb, err := sandbox.New(sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	trees := proctree.NewLazy(zerolog.Nop())
	src := New(Options{Log: zerolog.Nop(), Getenv: func(string) string { return "" }, Trees: trees.Get, Sandbox: sb})
	t.Cleanup(func() {
		_ = src.Close(context.Background())
		trees.Close()
	})
	return src
}

// pluginsConfig hosts the plugins of dirs, with its state in a folder of
// the test's.
func pluginsConfig(t *testing.T, watch bool, dirs ...string) config.Config {
	cfg := config.Default()
	cfg.Plugins.Dirs = dirs
	cfg.Plugins.StateDir = t.TempDir()
	cfg.Plugins.Watch = watch
	return cfg
}

// commit prepares cfg and commits it, as a reload nobody refuses.
func commit(t *testing.T, src *Source, cfg config.Config) {
	t.Helper()
	p, err := src.Prepare(cfg, toolsource.Env{})
	if err != nil {
		t.Fatal(err)
	}
	p.Commit(func(string) bool { return false })
}

func (rt *Source) currentHost() *plugin.Host {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.host
}

func names(tools []toolhost.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Spec().Name)
	}
	slices.Sort(out)
	return out
}

// A prepared scan that is discarded (the config was refused elsewhere)
// leaves what is in force as it was: the host, the tools, the static
// plugins, the folders watched; committed, the same config puts all of
// them in force.
func TestDiscardedScanLeavesWhatIsInForce(t *testing.T) {
	src := newSource(t)
	dirs := []string{t.TempDir(), t.TempDir()}
	testtool.WritePlugin(t, dirs[0], "Answer", testtool.SyncManifest("Answer", "answers"), map[string]string{"answer.sh": testtool.AnswerScript})
	cfg := pluginsConfig(t, true, dirs[0])
	commit(t, src, cfg)
	host, watched := src.currentHost(), src.watchTargets()
	if got := names(src.Tools()); !slices.Equal(got, []string{"Answer"}) || host == nil || !slices.Equal(watched, dirs[:1]) {
		t.Fatalf("in force: tools %v, host %v, watched %v", got, host, watched)
	}

	testtool.WritePlugin(t, dirs[1], "Weather", weatherManifest, nil)
	testtool.WritePlugin(t, dirs[1], "Other", testtool.SyncManifest("Other", "another"), map[string]string{"answer.sh": testtool.AnswerScript})
	next := cfg
	next.Plugins.Dirs = dirs
	next.Plugins.MaxOutputBytes++ // a new plugin host
	next.Plugins.Watch = false
	p, err := src.Prepare(next, toolsource.Env{})
	if err != nil {
		t.Fatal(err)
	}
	// What the node checks before anything starts: the stdio tools ready,
	// the static plugin a name a config may use, no tool of its own.
	if got := names(p.(toolsource.Ready).Ready()); !slices.Equal(got, []string{"Answer", "Other"}) {
		t.Errorf("ready %v, want Answer and Other", got)
	}
	if got := p.(interface{ Unregistered() []string }).Unregistered(); !slices.Equal(got, []string{"Weather"}) {
		t.Errorf("unregistered %v, want Weather", got)
	}
	p.Discard()
	if src.currentHost() != host {
		t.Error("a discarded scan replaced the plugin host")
	}
	if got := src.watchTargets(); !slices.Equal(got, watched) {
		t.Errorf("watched %v after a discarded scan, want %v", got, watched)
	}
	if got := names(src.Tools()); !slices.Equal(got, []string{"Answer"}) || len(src.Static()) != 0 {
		t.Errorf("after a discarded scan: tools %v, static %v", got, src.Static())
	}

	commit(t, src, next)
	if src.currentHost() == host {
		t.Error("a commit with new plugin settings kept the old host")
	}
	if got := names(src.Tools()); !slices.Equal(got, []string{"Answer", "Other"}) {
		t.Errorf("tools %v after the commit, want Answer and Other", got)
	}
	if st := src.Static(); len(st) != 1 || st[0].Name != "Weather" {
		t.Errorf("static %v after the commit, want Weather", st)
	}
	if got := src.watchTargets(); got != nil {
		t.Errorf("watched %v with watch off", got)
	}
}

// Retired plugin hosts are closed once nothing runs on them.
func TestRetiredPluginHostsArePruned(t *testing.T) {
	src := newSource(t)
	dir := t.TempDir()
	testtool.WritePlugin(t, dir, "Answer", testtool.SyncManifest("Answer", "answers"), map[string]string{"answer.sh": testtool.AnswerScript})
	cfg := pluginsConfig(t, false, dir)
	commit(t, src, cfg)
	var hosts []*plugin.Host
	for range 3 {
		hosts = append(hosts, src.currentHost())
		cfg.Plugins.MaxOutputBytes++
		commit(t, src, cfg)
	}
	src.mu.Lock()
	retired := slices.Clone(src.retired)
	src.mu.Unlock()
	if len(retired) != 0 {
		t.Errorf("%d retired hosts kept with nothing running on them", len(retired))
	}
	if src.currentHost() == hosts[0] || hosts[0] == hosts[1] || hosts[1] == hosts[2] {
		t.Error("commits with new plugin settings did not make new hosts")
	}
}

// The watch asks for a rescan when a plugin folder appears in a watched
// directory, and stops with its context.
func TestWatchAsksForARescan(t *testing.T) {
	src := newSource(t)
	dir := t.TempDir()
	commit(t, src, pluginsConfig(t, true, dir))
	rescans := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		src.Watch(ctx, func() {
			select {
			case rescans <- struct{}{}:
			default:
			}
		})
	}()
	// Written until the watch sees it: the watch starts its inotify
	// instance on its own goroutine, and a folder made before that is
	// not an event.
	deadline := time.After(30 * time.Second)
	for i := 0; ; i++ {
		testtool.WritePlugin(t, dir, "New"+string(rune('A'+i%26)), testtool.SyncManifest("New", "new"), map[string]string{"answer.sh": testtool.AnswerScript})
		select {
		case <-rescans:
			cancel()
			<-done
			return
		case <-time.After(2 * time.Second):
		case <-deadline:
			cancel()
			<-done
			t.Fatal("no rescan asked for after a plugin folder appeared")
		}
	}
}

// A closed source refuses to scan, and opens nothing more.
func TestClosedSourceRefusesToScan(t *testing.T) {
	src := newSource(t)
	if err := src.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := src.Prepare(pluginsConfig(t, false, t.TempDir()), toolsource.Env{})
	if !errors.Is(err, plugin.ErrClosed) {
		t.Fatalf("Prepare after Close = %v, want plugin.ErrClosed", err)
	}
	if src.Outbox() != nil {
		t.Error("a closed source opened an outbox")
	}
}
