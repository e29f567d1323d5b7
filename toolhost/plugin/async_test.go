//go:build unix

package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

const testCallbackURL = "http://127.0.0.1:9/token/plugin-callback"

// asyncResult is the answer AsyncTask gives.
type asyncResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Callback string `json:"callback"`
	Name     string `json:"name"`
}

func TestAsyncPluginAnswersThenRunsUntilClose(t *testing.T) {
	root := pluginRoot(t, "AsyncTask")
	h := newHost(t, Options{CallbackBaseURL: testCallbackURL, KillGrace: 500 * time.Millisecond})
	res, err := call(context.Background(), findTool(t, scan(t, h, root), "AsyncTask"), map[string]string{"mode": "stay"})
	if err != nil {
		t.Fatal(err)
	}
	var got asyncResult
	if err := json.Unmarshal([]byte(asJSON(t, res)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Content) != 1 || !strings.Contains(got.Content[0].Text, "{{VCP_ASYNC_RESULT::AsyncTask::t1}}") ||
		got.Callback != testCallbackURL || got.Name != "AsyncTask" {
		t.Fatalf("answer %s", asJSON(t, res))
	}
	pid := waitPidFile(t, filepath.Join(root, "AsyncTask", "async.pid"))
	if proctreetest.Collected(pid) || h.Running() != 1 {
		t.Fatalf("the plugin should keep running after answering (gone %v, running %d)", proctreetest.Collected(pid), h.Running())
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	assertGroupGone(t, pid, pid)
	if h.Running() != 0 || h.Kills() != 1 {
		t.Fatalf("after Close: running %d, kills %d", h.Running(), h.Kills())
	}
}

func TestAsyncPluginIsReapedWhenItExits(t *testing.T) {
	root := pluginRoot(t, "AsyncTask")
	h := newHost(t, Options{})
	if _, err := call(context.Background(), findTool(t, scan(t, h, root), "AsyncTask"), map[string]string{"mode": "exit"}); err != nil {
		t.Fatal(err)
	}
	pid := waitPidFile(t, filepath.Join(root, "AsyncTask", "async.pid"))
	testwait.For(t, "the async plugin to be reaped", func() bool { return h.Running() == 0 })
	if !proctreetest.Collected(pid) {
		t.Fatalf("pid %d still exists (a zombie?) after it was reaped", pid)
	}
	if h.Kills() != 0 {
		t.Fatalf("Kills() = %d for a plugin that exited by itself", h.Kills())
	}
}

func TestAsyncPluginIsKilledAtTheRuntimeCap(t *testing.T) {
	cases := []struct {
		mode    string
		pidFile string // the process that must end at the cap
	}{
		{"stay", "async.pid"},
		{"worker", "worker.pid"}, // the leader exits; its worker, output elsewhere, is still capped
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			root := pluginRoot(t, "AsyncTask")
			h := newHost(t, Options{AsyncMaxRuntime: 1500 * time.Millisecond, KillGrace: 200 * time.Millisecond})
			if _, err := call(context.Background(), findTool(t, scan(t, h, root), "AsyncTask"), map[string]string{"mode": c.mode}); err != nil {
				t.Fatal(err)
			}
			leader := waitPidFile(t, filepath.Join(root, "AsyncTask", "async.pid"))
			pid := waitPidFile(t, filepath.Join(root, "AsyncTask", c.pidFile))
			testwait.For(t, "the cap to stop the plugin", func() bool { return h.Running() == 0 })
			assertGroupGone(t, leader, pid)
			if h.Kills() != 1 {
				t.Fatalf("Kills() = %d, want 1", h.Kills())
			}
		})
	}
}

func TestAsyncPluginStoppedBeforeAnswering(t *testing.T) {
	root := pluginRoot(t, "AsyncTask")
	h := newHost(t, Options{KillGrace: 500 * time.Millisecond})
	tool := findTool(t, scan(t, h, root), "AsyncTask")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan error, 1)
	go func() {
		_, err := call(ctx, tool, map[string]string{"mode": "silent"})
		done <- err
	}()
	pid := waitPidFile(t, filepath.Join(root, "AsyncTask", "async.pid"))
	cause := errors.New("cancel_tool")
	cancel(cause)
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Fatalf("error %v, want the cancel cause", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Invoke did not return after cancel")
	}
	assertGroupGone(t, pid, pid)
	if h.Running() != 0 {
		t.Fatalf("running %d after a cancelled call", h.Running())
	}
}

// TestAsyncPluginExitingWithoutStreamingAnswer: output that ends before an
// answer is read like a synchronous run (JSON status trusted, exit ignored).
func TestAsyncPluginExitingWithoutStreamingAnswer(t *testing.T) {
	root := pluginRoot(t, "FailJSON", "FailNoJSON")
	for _, name := range []string{"FailJSON", "FailNoJSON"} {
		writeFile(t, filepath.Join(root, name), manifestFile,
			`{"name":"`+name+`","pluginType":"asynchronous","entryPoint":{"command":"sh fail.sh"}}`)
	}
	set := scan(t, newHost(t, Options{}), root)
	_, err := call(context.Background(), findTool(t, set, "FailJSON"), nil)
	var rep *ReportedError
	if !errors.As(err, &rep) || rep.Text != "quota exceeded for today" {
		t.Errorf("FailJSON: %v", err)
	}
	_, err = call(context.Background(), findTool(t, set, "FailNoJSON"), nil)
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "ValueError: boom") {
		t.Errorf("FailNoJSON: %v", err)
	}
}

// TestAsyncPluginRegistersAsAsynchronous: the wire manifest of an
// asynchronous plugin says "asynchronous", as the official node sends it; a
// synchronous one stays "synchronous".
func TestAsyncPluginRegistersAsAsynchronous(t *testing.T) {
	root := pluginRoot(t, "AsyncTask", "Echo")
	set := scan(t, newHost(t, Options{}), root)
	for name, want := range map[string]string{"AsyncTask": "asynchronous", "Echo": "synchronous"} {
		b, err := toolhost.WireManifest(findTool(t, set, name).Spec(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			PluginType string `json:"pluginType"`
		}
		if err := json.Unmarshal(b, &m); err != nil || m.PluginType != want {
			t.Errorf("%s: pluginType %q (%v), want %q in %s", name, m.PluginType, err, want, b)
		}
	}
}
