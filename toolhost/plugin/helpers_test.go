package plugin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
)

// waitLimit bounds every wait in these tests; generous for -race on 2 cores.
const waitLimit = 20 * time.Second

// pluginRoot copies the named testdata plugins into a fresh <tmp>/Plugin
// and returns that dir: plugins write pid files into their own folder, so
// each test gets its own copy.
func pluginRoot(t testing.TB, names ...string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "Plugin")
	for _, name := range names {
		copyDir(t, filepath.Join("testdata", "Plugin", name), filepath.Join(root, name))
	}
	if len(names) == 0 {
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func copyDir(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", from, err)
	}
}

// writeFile writes content under dir, creating folders.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// testLog writes the host's log lines to the test log.
func testLog(t testing.TB) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel)
}

// newHost returns a host that the test closes at its end, checking that
// every process it started was reaped.
func newHost(t testing.TB, opts Options) *Host {
	t.Helper()
	opts.Log = testLog(t)
	h := NewHost(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if n := h.Running(); n != 0 {
			t.Errorf("%d plugin processes still tracked after Close", n)
		}
	})
	return h
}

func scan(t testing.TB, h *Host, dirs ...string) *Set {
	t.Helper()
	set, err := h.Scan(dirs)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return set
}

func findTool(t testing.TB, set *Set, name string) toolhost.Tool {
	t.Helper()
	for _, tool := range set.Tools {
		if tool.Spec().Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %q in the set; warnings: %q", name, set.Warnings())
	return nil
}

// call invokes tool with string arguments.
func call(ctx context.Context, tool toolhost.Tool, args map[string]string) (any, error) {
	raw := make(map[string]json.RawMessage, len(args))
	for k, v := range args {
		b, _ := json.Marshal(v)
		raw[k] = b
	}
	return tool.Invoke(ctx, toolhost.Call{RequestID: "r1", Args: raw})
}

// asJSON marshals what Invoke returned, as the dispatcher would.
func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal result: %v", err)
	}
	return string(b)
}

// textOf returns the single text part of a text result.
func textOf(t testing.TB, v any) string {
	t.Helper()
	r, ok := v.(toolhost.ContentResult)
	if !ok || len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("result %s is not one text part", asJSON(t, v))
	}
	return r.Content[0].Text
}

// waitPidFile waits for a plugin to write its pid to path.
func waitPidFile(t testing.TB, path string) int {
	t.Helper()
	var pid int
	testwait.For(t, "pid file "+filepath.Base(path), func() bool {
		pid = readPid(path)
		return pid > 0
	})
	return pid
}

// readPid is the pid a fake plugin wrote to path, 0 while there is none.
func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid < 0 {
		return 0
	}
	return pid
}
