package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/placeholders/feed"
	"github.com/vcpnode/vcpnode/toolhost/mcp"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// learnRuns bounds the runs of one learning: each run grants what the
// previous one was refused, and a tool rarely needs more than a few.
const learnRuns = 8

func newSandboxLearnCmd(a *app) *cobra.Command {
	var configFlag, mcpName, placeholder string
	var timeout time.Duration
	learn := &cobra.Command{
		Use:   "learn TOOL [key=value...] | learn --mcp NAME [TOOL key=value...] | learn --placeholder NAME",
		Short: "Run one call (an MCP server's start, a placeholder's source) and print the profile that allows what it was refused",
		Long: "learn runs one call of TOOL with the arguments given (key=value, key:=JSON), or with --mcp\n" +
			"one start of the MCP server NAME (and a call when a tool and arguments follow), or with\n" +
			"--placeholder one run of the [[placeholders.command]] NAME or of the static plugin NAME, as the daemon\n" +
			"would, under the tool's profile. What the profile refused is granted and the run repeated\n" +
			"until it is refused nothing more; then the profile that allowed it is printed for you to\n" +
			"review and add to the config. Nothing is granted or saved by learn itself. The node's own\n" +
			"files are never granted.",
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case mcpName == "" && placeholder == "" && len(args) == 0:
				return usageErrorf("name a TOOL, an MCP server with --mcp NAME, or a placeholder's source with --placeholder NAME")
			case placeholder != "" && (mcpName != "" || len(args) > 0):
				return usageErrorf("--placeholder NAME takes no tool, arguments or --mcp")
			}
			return a.sandboxLearn(cmd.Context(), configFlag, mcpName, placeholder, timeout, args)
		},
	}
	learn.Flags().StringVarP(&configFlag, "config", "c", "", "config `FILE` (where vcpnode run looks by default)")
	learn.Flags().StringVar(&mcpName, "mcp", "", "learn the start of the MCP server `NAME` ([mcp.servers.NAME])")
	learn.Flags().StringVar(&placeholder, "placeholder", "", "learn one run of the placeholder command or static plugin `NAME`")
	learn.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "the `DURATION` one run (a call, a server start) may take")
	return learn
}

// learner is one learning: the config, the tool, what it asked and was
// refused.
type learner struct {
	a        *app
	cfg      config.Config
	path     string // the config file
	kind     string // "plugin", "MCP server" or "placeholder command"
	static   bool   // the plugin is a static one: run as a placeholder source
	tool     string // the VCP tool called
	key      string // its name in the profile's messages: the plugin, or the server
	base     string // the profile the tool has
	own      string // the profile learned: the tool's own, or base when configured
	args     map[string]json.RawMessage
	call     bool
	timeout  time.Duration
	learned  sandbox.Spec
	refusals []sandbox.Refusal
}

func (a *app) sandboxLearn(ctx context.Context, configFlag, mcpName, placeholder string, timeout time.Duration, args []string) error {
	path := a.findConfig(configFlag)
	if path == "" {
		return usageErrorf("no config file found: pass --config FILE")
	}
	cfg, err := config.Load(path)
	if err != nil {
		return err
	}
	l := &learner{a: a, cfg: cfg, path: path, timeout: timeout, call: true}
	switch {
	case placeholder != "":
		l.learnSource(strings.Trim(placeholder, "{}"))
		args = nil
	case mcpName != "":
		s, ok := cfg.MCP.Servers[mcpName]
		if !ok || s.Command == "" {
			return usageErrorf("no MCP stdio server %q in %s", mcpName, path)
		}
		l.kind, l.key, l.tool = "MCP server", mcpName, mcp.ToolName(mcpName, s.Tool)
		l.base = s.Sandbox
		l.cfg.MCP.Servers = map[string]config.MCPServerConfig{mcpName: s}
		l.cfg.Plugins.Dirs = nil
		l.call = len(args) > 0
		if l.call {
			args = args[1:] // the tool's name: the server's one VCP tool
		}
	default:
		l.kind, l.key, l.tool = "plugin", args[0], args[0]
		l.base = cfg.Tools[args[0]].Sandbox
		l.cfg.MCP.Servers = nil
		args = args[1:]
	}
	if l.args, err = parseCallArgs("", args); err != nil {
		return err
	}
	if l.base == "" {
		l.base = cmpOr(cfg.Sandbox.Profile, sandbox.Default)
	}
	if l.base == sandbox.None {
		return usageErrorf("%s %q runs under the profile none: nothing is refused to learn from", l.kind, l.key)
	}
	l.own = l.base
	if _, builtin := sandbox.Builtins()[l.base]; builtin {
		l.own = sandbox.ProfileName(l.key)
	}
	return l.learn(ctx, path)
}

// learnSource sets l to learn the placeholder command name, else the
// static plugin name: one run of that source alone, as the daemon's
// refresher runs it.
func (l *learner) learnSource(name string) {
	l.call = false
	l.cfg.MCP.Servers = nil
	ph := &l.cfg.Placeholders
	cmds := ph.Command
	ph.Values, ph.Command, ph.System.Enabled = nil, nil, false // the one source alone
	if i := slices.IndexFunc(cmds, func(c config.CommandPlaceholderConfig) bool { return strings.Trim(c.Name, "{}") == name }); i >= 0 {
		l.kind, l.key, l.tool = "placeholder command", cmds[i].Name, cmds[i].Name
		l.base = cmds[i].Sandbox
		ph.Command = cmds[i : i+1]
		l.cfg.Plugins.Dirs = nil
		return
	}
	l.kind, l.key, l.tool, l.static = "plugin", name, name, true
	l.base = l.cfg.Tools[name].Sandbox
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// learn runs the tool until it is refused nothing new, then prints what
// it learned.
func (l *learner) learn(ctx context.Context, path string) error {
	home := l.a.getenv("HOME")
	var outcome string
	var failed bool
	runs := 0
	for runs < learnRuns {
		runs++
		refused, out, bad, err := l.run(ctx)
		if err != nil {
			return err
		}
		outcome, failed = out, bad
		l.refusals = append(l.refusals, refused...)
		if !sandbox.AddRefusals(&l.learned, refused, home) {
			break
		}
		fmt.Fprintf(l.a.stderr, "vcpnode: run %d was refused %s; running again with it granted\n", runs, describeRefusals(refused))
	}
	hinted := false
	for _, f := range l.refusals {
		switch {
		case f.Own:
			fmt.Fprintf(l.a.stderr, "vcpnode: %s %q reads %s, one of the node's own files, which no profile grants\n", l.kind, l.key, f.Path)
		case f.Hint != "":
			fmt.Fprintf(l.a.stderr, "vcpnode: %s %q was refused %s, which no profile grants: %s\n", l.kind, l.key, f.What, f.Hint)
			hinted = true
		}
	}
	what := "the call"
	switch {
	case l.kind == "placeholder command" || l.static:
		what = "the placeholder's run"
	case !l.call:
		what = "the server's start"
	}
	switch {
	case len(l.learned.Read)+len(l.learned.Write)+len(l.learned.ConnectPorts) == 0 && l.learned.Network == nil:
		refused := "nothing"
		if hinted {
			refused = "nothing a profile grants (above: what to change in the tool)"
		}
		fmt.Fprintf(l.a.stdout, "# %s under the profile %q was refused %s: no profile to add.\n# %s\n", what, l.base, refused, outcome)
		if failed {
			return exitStatus(1)
		}
		return nil
	case failed:
		fmt.Fprintf(l.a.stdout, "# %s still fails with what it was refused granted (%d runs): %s\n", what, runs, outcome)
	default:
		fmt.Fprintf(l.a.stdout, "# %s succeeds with this profile (%d runs). Review it, add it to %s\n# and run `vcpnode reload`:\n", what, runs, path)
	}
	fmt.Fprint(l.a.stdout, sandbox.ProfileConfig(l.kind, l.key, l.base, l.learned))
	if failed {
		return exitStatus(1)
	}
	return nil
}

// run starts a node on the config with what was learned so far, makes
// the call (or waits for the server's start) and returns what the
// profile refused, and how the run ended.
func (l *learner) run(ctx context.Context) (refused []sandbox.Refusal, outcome string, failed bool, err error) {
	cfg := l.cfg
	cfg.Sandbox.Profiles = maps.Clone(cfg.Sandbox.Profiles)
	if cfg.Sandbox.Profiles == nil {
		cfg.Sandbox.Profiles = map[string]config.SandboxSpec{}
	}
	spec := cfg.Sandbox.Profiles[l.own]
	if l.own != l.base {
		spec = config.SandboxSpec{Extends: l.base}
		switch l.kind {
		case "MCP server":
			s := cfg.MCP.Servers[l.key]
			s.Sandbox = l.own
			cfg.MCP.Servers = map[string]config.MCPServerConfig{l.key: s}
		case "placeholder command":
			c := cfg.Placeholders.Command[0]
			c.Sandbox = l.own
			cfg.Placeholders.Command = []config.CommandPlaceholderConfig{c}
		default:
			cfg.Tools = maps.Clone(cfg.Tools)
			if cfg.Tools == nil {
				cfg.Tools = map[string]config.ToolConfig{}
			}
			t := cfg.Tools[l.key]
			t.Sandbox = l.own
			cfg.Tools[l.key] = t
		}
	}
	spec.Read = append(slices.Clone(spec.Read), l.learned.Read...)
	spec.Write = append(slices.Clone(spec.Write), l.learned.Write...)
	spec.ConnectPorts = append(slices.Clone(spec.ConnectPorts), l.learned.ConnectPorts...)
	if l.learned.Network != nil {
		spec.Network = l.learned.Network
	}
	cfg.Sandbox.Profiles[l.own] = spec
	cfg.Node.ExposedTools = nil

	var mu sync.Mutex
	collect := func(kind, tool string, rs []sandbox.Refusal) {
		mu.Lock()
		defer mu.Unlock()
		refused = append(refused, rs...)
	}
	if l.kind == "placeholder command" || l.static {
		outcome, failed, err = l.runSource(ctx, cfg, collect)
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(refused), firstLine(outcome), failed, err
	}
	n, err := node.New(cfg, zerolog.Nop(), node.WithGetenv(l.a.getenv), node.WithSandboxRefusals(collect))
	if err != nil {
		return nil, "", false, err
	}
	defer n.CloseLocal()
	rctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	if l.kind == "MCP server" {
		outcome, failed = l.awaitServer(rctx, n)
	}
	if l.call && !failed {
		out := n.CallLocal(rctx, "learn", l.tool, l.args)
		outcome, failed = string(out.Result), out.Err != ""
		if failed {
			outcome = out.Err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(refused), firstLine(outcome), failed, nil
}

// runSource runs the placeholder source once, as `placeholders --local`
// does, and tells how it ended: its value, or its error.
func (l *learner) runSource(ctx context.Context, cfg config.Config, collect func(string, string, []sandbox.Refusal)) (string, bool, error) {
	rctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	eo := feed.EvalOptions{Protected: l.a.protectedFiles(l.path), Log: zerolog.Nop(), OnRefusal: collect}
	if l.static {
		eo.Static = func(name string) bool { return name == l.key }
	}
	resp, warnings, err := feed.EvaluateWith(rctx, cfg, eo)
	if err != nil {
		return "", false, err
	}
	if len(resp.Placeholders) == 0 {
		why := "no [[placeholders.command]] or static plugin is named %q"
		if len(warnings) > 0 {
			why += " (" + strings.Join(warnings, "; ") + ")"
		}
		return "", false, usageErrorf(why, l.key)
	}
	for _, p := range resp.Placeholders {
		if p.LastError != "" {
			return p.LastError, true, nil
		}
	}
	p := resp.Placeholders[0]
	return fmt.Sprintf("%s = %q", p.Key, p.Value), false, nil
}

// awaitServer waits for the MCP server's first start to end: running, or
// failed with its error.
func (l *learner) awaitServer(ctx context.Context, n *node.Node) (string, bool) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, st := range n.MCPServers() {
			switch {
			case st.State == mcp.StateRunning:
				return fmt.Sprintf("the server runs, with %d tools", st.Tools), false
			case st.LastError != "":
				return st.LastError, true
			}
		}
		select {
		case <-ctx.Done():
			return "the server did not start within " + l.timeout.String(), true
		case <-tick.C:
		}
	}
}

func describeRefusals(rs []sandbox.Refusal) string {
	var out string
	for i, f := range rs {
		if i > 0 {
			out += ", "
		}
		out += f.String()
	}
	return out
}
