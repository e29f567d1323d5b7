package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// demoCallbackWait bounds the wait for the asynchronous example's result.
const demoCallbackWait = 15 * time.Second

// demoPluginsDir finds the example plugins; tests replace it.
var demoPluginsDir = findExamplePlugins

// findExamplePlugins returns examples/Plugin under the working directory or
// next to the binary, as an absolute path, or "".
func findExamplePlugins() string {
	candidates := []string{filepath.Join("examples", "Plugin")}
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), "examples", "Plugin"))
	}
	for _, c := range candidates {
		abs, err := filepath.Abs(c)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(filepath.Join(abs, "UnitConverter", "plugin-manifest.json")); err == nil && fi.Mode().IsRegular() {
			return abs
		}
	}
	return ""
}

// demoPlugins is the demo's optional part: the example VCP plugins, hosted
// as a real node hosts a Plugin folder.
type demoPlugins struct {
	dir     string
	skipped string // why the examples are not used, when found but unusable
}

// setupDemoPlugins adds the example plugins to cfg when they are found and
// python3 can run them; their callback outbox is in the demo's own state
// directory (cfg.Plugins.StateDir).
func setupDemoPlugins(cfg *config.Config) *demoPlugins {
	dp := &demoPlugins{dir: demoPluginsDir()}
	if dp.dir == "" {
		return dp
	}
	if _, err := exec.LookPath("python3"); err != nil {
		dp.skipped = "python3 is not on PATH"
		return dp
	}
	cfg.Plugins.Dirs = []string{dp.dir}
	cfg.Plugins.Watch = false
	cfg.Node.ExposedTools = append(cfg.Node.ExposedTools, "UnitConverter", "DelayedEcho")
	if demoSlack > 1 {
		for _, name := range []string{"UnitConverter", "DelayedEcho"} {
			if cfg.Tools == nil {
				cfg.Tools = map[string]config.ToolConfig{}
			}
			t := cfg.Tools[name]
			t.Timeout = config.Duration(time.Duration(demoSlack) * 10 * time.Second) // the manifests say 10 s
			cfg.Tools[name] = t
		}
	}
	return dp
}

func (dp *demoPlugins) active() bool { return dp.dir != "" && dp.skipped == "" }

// describe is the header line about the examples.
func (dp *demoPlugins) describe(out *demoPrinter) {
	switch {
	case dp.active():
		out.printf("  plugins %s (UnitConverter and DelayedEcho exposed)\n", dp.dir)
	case dp.dir != "":
		out.printf("  plugins %s not used: %s\n", dp.dir, dp.skipped)
	}
}

// tools is what the node must register.
func (dp *demoPlugins) tools() []string {
	if dp.active() {
		return []string{"DelayedEcho", "Echo", "NodeInfo", "UnitConverter"}
	}
	return []string{"Echo", "NodeInfo"}
}

func (dp *demoPlugins) calls() []demoCall {
	if !dp.active() {
		return nil
	}
	return []demoCall{
		{tool: "UnitConverter", args: map[string]any{"command": "Convert", "value": "10", "from": "km", "to": "mi"},
			describe: "a synchronous VCP plugin (Python, examples/Plugin) converts units", check: hasText("10 km = 6.21371 mi")},
		{tool: "DelayedEcho", args: map[string]any{"text": "hello from a background task", "delay": "1"},
			describe: "an asynchronous plugin answers at once with a placeholder", check: hasText("{{VCP_ASYNC_RESULT::DelayedEcho::")},
	}
}

// awaitCallback waits for DelayedEcho's late result, which reaches the
// server as plugin_callback_forward (the frame line is printed as it comes).
// It then gives the plugin a moment to exit, so that shutting down does not
// have to kill it.
func (dp *demoPlugins) awaitCallback(ctx context.Context, d *demo, conn *demohub.Conn, running func() int) {
	if !dp.active() {
		return
	}
	d.out.printf("\nwaiting for DelayedEcho's result: the plugin posts it to the node, which forwards it\n")
	wctx, cancel := context.WithTimeout(ctx, time.Duration(demoSlack)*demoCallbackWait)
	defer cancel()
	m, err := conn.WaitType(wctx, wsproto.TypePluginCallbackForward)
	if err != nil {
		d.failed(ctx, "the asynchronous result did not arrive", err)
		return
	}
	var cb struct {
		PluginName, TaskID, Message string
	}
	if err := json.Unmarshal(m.(wsproto.PluginCallbackForward).CallbackData, &cb); err != nil || cb.PluginName != "DelayedEcho" || cb.TaskID == "" {
		d.problem("the forwarded callback does not name DelayedEcho and a task: %s", clip(string(m.(wsproto.PluginCallbackForward).CallbackData)))
		return
	}
	d.out.printf("  ok: the server can now fill {{VCP_ASYNC_RESULT::%s::%s}} with %q\n", cb.PluginName, cb.TaskID, clip(cb.Message))
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for running() > 0 {
		select {
		case <-tick.C:
		case <-wctx.Done():
			return // shutdown stops it
		}
	}
}

// describeCallback is the frame line of a plugin_callback_forward.
func describeCallback(m wsproto.PluginCallbackForward) string {
	var cb struct {
		PluginName, TaskID, Status string
	}
	if err := json.Unmarshal(m.CallbackData, &cb); err != nil {
		return fmt.Sprintf("serverName=%s %d bytes of callback data", m.ServerName, len(m.CallbackData))
	}
	return fmt.Sprintf("serverName=%s %s/%s status=%s (%d bytes)", m.ServerName, cb.PluginName, cb.TaskID, cb.Status, len(m.CallbackData))
}
