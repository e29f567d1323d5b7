package plugin

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStaticPluginRun(t *testing.T) {
	root := pluginRoot(t, "Static")
	set := scan(t, newHost(t, Options{}), root)
	out, err := set.Static[0].Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// static.sh runs `cat` first: it returns at once because stdin is /dev/null.
	if want := "static value for " + filepath.Dir(root) + "\n"; out.Stdout != want || out.TimedOut || out.ExitCode != 0 || out.Truncated {
		t.Fatalf("output %+v, want stdout %q", out, want)
	}
}

func TestStaticPluginTimeoutKeepsPartialOutput(t *testing.T) {
	root := pluginRoot(t, "StaticSlow")
	h := newHost(t, Options{KillGrace: 200 * time.Millisecond})
	set := scan(t, h, root)
	out, err := set.Static[0].Run(context.Background())
	if err != nil {
		t.Fatalf("a run cut by its timeout is not an error: %v", err)
	}
	if !out.TimedOut || out.Stdout != "partial value\n" || out.Duration <= 0 {
		t.Fatalf("output %+v", out)
	}
	if h.Running() != 0 || h.Kills() != 1 {
		t.Fatalf("running %d, kills %d", h.Running(), h.Kills())
	}
}

func TestStaticPluginFailureAndCancel(t *testing.T) {
	root := pluginRoot(t, "FailNoJSON", "StaticSlow")
	writeFile(t, filepath.Join(root, "FailNoJSON"), manifestFile,
		`{"name":"FailNoJSON","pluginType":"static","entryPoint":{"command":"sh fail.sh"}}`)
	h := newHost(t, Options{KillGrace: 200 * time.Millisecond})
	set := scan(t, h, root)
	out, err := set.Static[0].Run(context.Background())
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "ValueError: boom") || out.ExitCode != 3 || out.Stdout != "partial output\n" {
		t.Fatalf("failing static plugin: %+v, %v", out, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := set.Static[1].Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
}
