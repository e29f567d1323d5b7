package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/node"
	"github.com/vcpnode/vcpnode/toolhost"
)

// runChild is the node process: it connects to the parent's hub with n
// tools, answers "settle" on stdin with its runtime stats on stdout, and
// shuts down gracefully at EOF on stdin.
// childOptions configure the node in the child process.
type childOptions struct {
	tools      int
	sink       bool
	filesRoot  string
	memLimit   int64
	concurrent int
}

func runChild(o childOptions) error {
	n, sink := o.tools, o.sink
	hubURL := os.Getenv(envHubURL)
	if hubURL == "" {
		return errors.New("-child is started by rsscheck itself; run rsscheck without it")
	}
	cfg := config.Default()
	cfg.Hub.URL = hubURL
	cfg.Hub.Name = "rsscheck-node"
	if o.filesRoot != "" {
		cfg.Files.Roots = []string{o.filesRoot}
	}
	cfg.Node.MemoryLimit = o.memLimit
	if o.concurrent > 0 {
		cfg.Node.MaxConcurrent = o.concurrent
	}
	// The daemon's own log setup: info level, JSON, timestamps.
	log := zerolog.New(os.Stderr).Level(zerolog.InfoLevel).With().Timestamp().Logger()
	tools := make([]toolhost.Tool, n)
	for i := range tools {
		tools[i] = newPluginLikeTool(i + 1)
	}
	if sink {
		tools = append(tools, sinkTool{})
	}
	nd, err := node.New(cfg, log, node.WithTools(tools...),
		node.WithLocalIPs(func() ([]string, error) { return []string{"127.0.0.1"}, nil }))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- nd.Run(ctx) }()

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != settleLine {
			return fmt.Errorf("unexpected line %q on stdin", in.Text())
		}
		runtime.GC()
		debug.FreeOSMemory()
		fmt.Println(runtimeStats())
	}
	cancel()
	return <-ran
}

// runtimeStats describes where the Go runtime's memory is, on one line.
func runtimeStats() string {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return fmt.Sprintf("HeapInuse %.2f MiB, HeapIdle-not-released %.2f MiB, StackInuse %.2f MiB, Sys %.2f MiB, goroutines %d",
		mib(int64(m.HeapInuse)), mib(int64(m.HeapIdle-m.HeapReleased)), mib(int64(m.StackInuse)), mib(int64(m.Sys)),
		runtime.NumGoroutine())
}

// pluginLikeTool carries a spec the size of a typical VCP plugin manifest's
// (a paragraph of description, two commands with examples), so 50 of them
// weigh what 50 plugins would in the registry and in register_tools.
type pluginLikeTool struct{ spec toolhost.Spec }

func newPluginLikeTool(i int) pluginLikeTool {
	name := fmt.Sprintf("Plugin%02d", i)
	para := strings.Repeat("This plugin does one useful thing on this machine and explains its parameters to the model. ", 3)
	cmd := func(verb string) toolhost.Command {
		return toolhost.Command{
			Command:     verb,
			Description: verb + ": " + para + "\nParameters: query (string, required), limit (number, optional).",
			Example:     "<<<[TOOL_REQUEST]>>>\ntool_name:「始」" + name + "「末」,\ncommand:「始」" + verb + "「末」,\nquery:「始」example「末」\n<<<[END_TOOL_REQUEST]>>>",
		}
	}
	return pluginLikeTool{spec: toolhost.Spec{
		Name:               name,
		DisplayName:        fmt.Sprintf("Plugin number %d", i),
		Version:            "1.0.0",
		Description:        para,
		Commands:           []toolhost.Command{cmd("Search"), cmd("Fetch")},
		Timeout:            30 * time.Second,
		Source:             "rsscheck",
		DistributedExposed: true,
	}}
}

func (t pluginLikeTool) Spec() toolhost.Spec { return t.spec }

func (t pluginLikeTool) Invoke(context.Context, toolhost.Call) (any, error) {
	return t.spec.Name + " ran", nil
}
