package plugin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/outpipe"
)

// winRoot is an empty plugin root, removed file by file at the end: under
// Wine 8 the RemoveAll of t.TempDir fails ("unlinkat …: Invalid function").
func winRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "plugin-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(t, dir) })
	return dir
}

func removeTree(t *testing.T, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			removeTree(t, p)
			continue
		}
		if err := os.Remove(p); err != nil {
			t.Error(err)
		}
	}
	if err := os.Remove(dir); err != nil {
		t.Error(err)
	}
}

// openTree waits for the leader's and the grandchild's pid files and opens
// both processes, to see them end.
func openTree(t *testing.T, dir string) map[string]windows.Handle {
	t.Helper()
	hs := map[string]windows.Handle{}
	for _, role := range []string{"leader", "grandchild"} {
		pid := waitWinPid(t, dir, role)
		h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
		if err != nil {
			t.Fatalf("open %s (pid %d): %v", role, pid, err)
		}
		t.Cleanup(func() { _ = windows.CloseHandle(h) })
		hs[role] = h
	}
	return hs
}

// winStartLimit bounds the wait for the fake plugin's processes: three
// process starts under Wine on a loaded machine once took over 20 s.
const winStartLimit = time.Minute

// waitWinPid waits for role's pid file in dir; on failure it names the
// pid files that are there, to tell which process did not come up.
func waitWinPid(t *testing.T, dir, role string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), winStartLimit)
	defer cancel()
	var pid int
	if !testwait.Poll(ctx, func() bool {
		pid = readPid(filepath.Join(dir, role+".pid"))
		return pid > 0
	}) {
		var have []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			have = append(have, e.Name())
		}
		t.Fatalf("no %s.pid after %s; the folder holds %q", role, winStartLimit, have)
	}
	return pid
}

func assertEnded(t *testing.T, hs map[string]windows.Handle) {
	t.Helper()
	for role, h := range hs {
		ev, err := windows.WaitForSingleObject(h, uint32(waitLimit/time.Millisecond))
		if err != nil || ev != windows.WAIT_OBJECT_0 {
			t.Errorf("%s still running (%d, %v)", role, ev, err)
		}
	}
}

func TestWindowsCancelKillsThePluginTree(t *testing.T) {
	root := winRoot(t)
	dir := escapePlugin(t, root, "synchronous", "hang")
	h := newHost(t, Options{KillGrace: time.Hour}) // no SIGTERM here: the grace must not be waited
	if h.TreeMode() != "job-object" {
		t.Fatalf("tree mode %s", h.TreeMode())
	}
	tool := findTool(t, scan(t, h, root), "Escape")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := call(ctx, tool, map[string]string{"x": "y"})
		done <- err
	}()
	hs := openTree(t, dir)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the call did not return after the cancel")
	}
	assertEnded(t, hs)
	testwait.For(t, "the host to let the run go", func() bool { return h.Running() == 0 })
}

// The leader answers and exits while the grandchild keeps the output pipe
// open: the answer comes back at once (the read deadline after the
// leader's exit works on Windows pipes), and the grandchild, left over
// from a synchronous run, is stopped once the run has answered.
func TestWindowsAnswerWhileADescendantHoldsStdout(t *testing.T) {
	root := winRoot(t)
	dir := escapePlugin(t, root, "synchronous", "answer")
	h := newHost(t, Options{})
	tool := findTool(t, scan(t, h, root), "Escape")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	res, err := call(ctx, tool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "accepted; the grandchild keeps working" {
		t.Fatalf("answer %q", got)
	}
	// The stop starts with the answer, so on a loaded machine the
	// grandchild may be gone before this looks (the leader is, always).
	assertWinEnded(t, dir, "grandchild")
	testwait.For(t, "the host to let the run go", func() bool { return h.Running() == 0 })
}

// assertWinEnded waits for role's pid file in dir and then for the process
// to end; one that is gone already (no such process) has ended.
func assertWinEnded(t *testing.T, dir, role string) {
	t.Helper()
	pid := waitWinPid(t, dir, role)
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return
	}
	if err != nil {
		t.Fatalf("open %s (pid %d): %v", role, pid, err)
	}
	defer windows.CloseHandle(h)
	assertEnded(t, map[string]windows.Handle{role: h})
}

func TestWindowsOutputPipeHasReadDeadlines(t *testing.T) {
	ours, theirs, err := outpipe.New()
	if err != nil {
		t.Fatal(err)
	}
	defer ours.Close()
	defer theirs.Close()
	if _, err := theirs.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := ours.Read(buf); err != nil || string(buf[:n]) != "hi" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if err := ours.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := ours.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
}

// TestWindowsOutputPipeReadsWhatItHeldAtTheDeadline: what the named pipe
// holds at the drain deadline is read (PeekNamedPipe counts it).
func TestWindowsOutputPipeReadsWhatItHeldAtTheDeadline(t *testing.T) {
	testReadsWhatThePipeHeldAtTheDeadline(t)
}

func TestWindowsPlanLaunch(t *testing.T) {
	bin := winRoot(t)
	writeFile(t, bin, "node.exe", "")
	writeFile(t, bin, "run.cmd", "")
	dir := winRoot(t)
	writeFile(t, dir, `bin\tool.exe`, "")
	for _, c := range []struct {
		command, path string // path "": cmd.exe
		argv          []string
	}{
		{"node X.js", filepath.Join(bin, "node.exe"), []string{"node", "X.js"}},
		{"node.exe X.js", filepath.Join(bin, "node.exe"), []string{"node.exe", "X.js"}},
		{`bin\tool a`, filepath.Join(dir, `bin\tool.exe`), []string{`bin\tool`, "a"}},
		{"bin/tool.exe", filepath.Join(dir, `bin/tool.exe`), []string{"bin/tool.exe"}},
		{"run", "", nil},
		{"node %CD%", "", nil},
		{`node "my file.js"`, "", nil},
		{"missing", "", nil},
	} {
		l, _ := planLaunch(c.command, dir, bin)
		if c.path == "" {
			want := `" /d /s /c "` + c.command + `"`
			if !l.shell || !strings.HasSuffix(l.cmdLine, want) {
				t.Errorf("%s: want cmd.exe, got %+v", c.command, l)
			}
			continue
		}
		if l.shell || !strings.EqualFold(l.path, c.path) || strings.Join(l.argv, " ") != strings.Join(c.argv, " ") {
			t.Errorf("%s: got %+v, want %s %q", c.command, l, c.path, c.argv)
		}
	}
}

// A shell command runs under cmd.exe with its quotes intact.
func TestWindowsShellCommand(t *testing.T) {
	root := winRoot(t)
	dir := filepath.Join(root, "Echo")
	writeFile(t, dir, manifestFile,
		`{"name":"Echo","pluginType":"synchronous","entryPoint":{"command":"echo {\"status\":\"success\",\"result\":\"via cmd\"}"},"communication":{"protocol":"stdio","timeout":60000}}`)
	h := newHost(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	res, err := call(ctx, findTool(t, scan(t, h, root), "Echo"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, res); got != "via cmd" {
		t.Fatalf("answer %q", got)
	}
}
