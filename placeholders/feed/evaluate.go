package feed

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/placeholders"
	"github.com/vcpnode/vcpnode/toolconfig"
	"github.com/vcpnode/vcpnode/toolhost/plugin"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
	"github.com/vcpnode/vcpnode/toolhost/sandbox"
)

// Evaluate runs every placeholder source cfg defines once (its own, the
// static plugins of its plugin dirs, and sources), as a running node would
// at start, and returns the outcome with warnings: a one-shot check that
// needs no daemon. protected are the node's own files the config does not
// name (its own path, the credential), as a daemon is given them: no
// command may read them, whatever its profile grants.
func Evaluate(ctx context.Context, cfg config.Config, protected []string, log zerolog.Logger, sources ...Source) (controlapi.PlaceholdersResponse, []string, error) {
	return EvaluateWith(ctx, cfg, EvalOptions{Protected: protected, Log: log, Sources: sources})
}

// EvalOptions are Evaluate's, and what `sandbox learn` adds.
type EvalOptions struct {
	Protected []string
	Log       zerolog.Logger
	Sources   []Source
	// OnRefusal is told what a source's sandbox profile refused.
	OnRefusal func(kind, tool string, refused []sandbox.Refusal)
	// Static, when set, picks the static plugins that run, by name.
	Static func(name string) bool
}

// EvaluateWith is Evaluate with options.
func EvaluateWith(ctx context.Context, cfg config.Config, eo EvalOptions) (controlapi.PlaceholdersResponse, []string, error) {
	log := eo.Log
	if err := cfg.Validate(toolconfig.Check); err != nil {
		return controlapi.PlaceholdersResponse{}, nil, err
	}
	trees := proctree.NewLazy(log)
	defer trees.Close() // deferred first, so it runs after the plugin host's close
	sb, err := oneShotSandbox(cfg, eo.Protected, trees, log, eo.OnRefusal)
	if err != nil {
		return controlapi.PlaceholdersResponse{}, nil, err
	}
	f := New(Options{Log: log, Trees: trees.Get, Sandbox: sb, Sources: eo.Sources})
	static, warnings, closeHost, err := scanStaticPlugins(cfg, trees, sb, log)
	if err != nil {
		return controlapi.PlaceholdersResponse{}, nil, err
	}
	defer closeHost()
	if eo.Static != nil {
		static = slices.DeleteFunc(static, func(p *plugin.StaticPlugin) bool { return !eo.Static(p.Name) })
	}
	jobs, warn, err := f.Jobs(cfg, static)
	if err != nil {
		return controlapi.PlaceholdersResponse{}, nil, fmt.Errorf("placeholders: %w", err)
	}
	warnings = append(warnings, warn...)
	if err := placeholders.RefreshOnce(ctx, f.store, log, jobs); err != nil {
		warnings = append(warnings, splitJoined(err)...)
	}
	return storeStatus(f.store), warnings, nil
}

// oneShotSandbox is cfg's sandbox for a run with no daemon: its processes
// are confined as the daemon's would be, protected joining the config's
// own files as the daemon's do.
func oneShotSandbox(cfg config.Config, protected []string, trees *proctree.Lazy, log zerolog.Logger,
	onRefusal func(kind, tool string, refused []sandbox.Refusal)) (*sandbox.Sandbox, error) {
	opts, err := toolconfig.SandboxOptions(cfg, "", os.Getenv, os.Geteuid())
	if err != nil {
		return nil, err
	}
	opts.Protected = append(opts.Protected, protected...)
	opts.Trees, opts.Log, opts.OnRefusal = trees.Get(), log, onRefusal
	return sandbox.New(opts)
}

// scanStaticPlugins is the static plugins of cfg's plugin dirs, with the
// scan's warnings, on a host of their own; closeHost stops whatever is
// still running.
func scanStaticPlugins(cfg config.Config, trees *proctree.Lazy, sb *sandbox.Sandbox, log zerolog.Logger) (static []*plugin.StaticPlugin, warnings []string, closeHost func(), err error) {
	p := cfg.Plugins
	if len(p.Dirs) == 0 {
		return nil, nil, func() {}, nil
	}
	host := plugin.NewHost(plugin.Options{PassEnv: p.PassEnv, EnvFile: p.EnvFile, MaxOutputBytes: p.MaxOutputBytes,
		ProcessTrees: trees.Get(), Sandbox: sb, Log: log})
	closeHost = func() {
		ctx, cancel := context.WithTimeout(context.Background(), plugin.CloseWait)
		defer cancel()
		if err := host.Close(ctx); err != nil {
			log.Warn().Err(err).Msg("some plugin processes did not stop")
		}
	}
	set, err := host.Scan(p.Dirs)
	if err != nil {
		closeHost()
		return nil, nil, nil, fmt.Errorf("plugins: %w", err)
	}
	return set.Static, set.Warnings(), closeHost, nil
}
