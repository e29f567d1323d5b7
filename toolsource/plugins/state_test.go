package plugins

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/testtool"
	"github.com/vcpnode/vcpnode/outbox"
	"github.com/vcpnode/vcpnode/toolsource"
)

// A manifest of a plugin in use that no longer reads refuses the scan,
// and what is in force stays; a broken folder never loaded refuses
// nothing and is listed as skipped.
func TestAPluginInUseThatBreaksRefusesTheScan(t *testing.T) {
	src := newSource(t)
	dir := t.TempDir()
	testtool.WritePlugin(t, dir, "Answer", testtool.SyncManifest("Answer", "answers"), map[string]string{"answer.sh": testtool.AnswerScript})
	cfg := pluginsConfig(t, false, dir)
	commit(t, src, cfg)
	host := src.currentHost()

	testtool.WritePlugin(t, dir, "Answer", `{"name":"Answer",`, nil) // a half-saved edit
	if _, err := src.Prepare(cfg, toolsource.Env{}); err == nil || !strings.Contains(err.Error(), `plugin "Answer", which is in use`) {
		t.Fatalf("Prepare with the plugin in use broken = %v, want it refused", err)
	}
	if src.currentHost() != host || !slices.Equal(names(src.Tools()), []string{"Answer"}) {
		t.Errorf("a refused scan changed what is in force: tools %v", names(src.Tools()))
	}

	testtool.WritePlugin(t, dir, "Answer", testtool.SyncManifest("Answer", "answers"), nil)
	testtool.WritePlugin(t, dir, "Never", `{"name":"Never",`, nil)
	testtool.WritePlugin(t, dir, "Weather", weatherManifest, nil)
	commit(t, src, cfg)
	kind := func(folder string) string {
		for _, s := range src.Skipped() {
			if filepath.Base(filepath.Dir(s.Path)) == folder {
				return s.Kind
			}
		}
		return ""
	}
	if kind("Weather") != "static" || kind("Never") != "invalid" || kind("Answer") != "" {
		t.Errorf("skipped %+v, want Weather static and Never invalid", src.Skipped())
	}
	var st controlapi.StatusResponse
	src.Status(&st)
	if st.Plugins.Calls != 0 || len(st.PluginChanges) != 0 || src.Processes() != 0 || src.Kills() != 0 {
		t.Errorf("status %+v with nothing running", st.Plugins)
	}
}

// A new state directory moves the outbox: the callbacks waiting go with
// it, and the old directory is released; one that is refused leaves the
// outbox where it was and locks nothing.
func TestANewStateDirMovesTheOutbox(t *testing.T) {
	src := newSource(t)
	dir := t.TempDir()
	cfg := pluginsConfig(t, false, dir)
	oldDir := cfg.Plugins.StateDir
	commit(t, src, cfg)
	ctx := context.Background()
	if err := src.Outbox().Deliver(ctx, "Later", "t1", json.RawMessage(`{"status":"Succeed"}`)); err != nil {
		t.Fatal(err)
	}

	refused := cfg
	refused.Plugins.StateDir = t.TempDir()
	p, err := src.Prepare(refused, toolsource.Env{})
	if err != nil {
		t.Fatal(err)
	}
	p.Discard()
	if n := src.Outbox().Waiting(); n != 1 {
		t.Errorf("%d callbacks wait after a discarded move, want 1", n)
	}
	if box, err := outbox.Open(refused.Plugins.StateDir, make(chan struct{}, 1), zerolog.Nop()); err != nil {
		t.Errorf("a discarded scan left its state directory locked: %v", err)
	} else {
		box.Close()
	}

	moved := cfg
	moved.Plugins.StateDir = t.TempDir()
	commit(t, src, moved)
	if n := src.Outbox().Waiting(); n != 1 {
		t.Errorf("%d callbacks wait after the move, want 1", n)
	}
	if box, err := outbox.Open(oldDir, make(chan struct{}, 1), zerolog.Nop()); err != nil {
		t.Errorf("the old state directory is still locked: %v", err)
	} else {
		box.Close()
	}
}
