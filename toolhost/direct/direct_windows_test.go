package direct

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// There is no Node.js under Wine, so on Windows the test binary stands in
// for node: started as "node - vcpnode-direct NAME" it reads the host
// script from stdin (checking it arrived whole), connects back over the
// loopback channel with the token, and speaks the host protocol: a call
// starts a child that sleeps (the plugin's worker) and answers with both
// pids. That exercises everything on the Go side of a Windows host: the
// channel, the script through a pipe larger than Windows' buffer, the Job
// Object, the kill at Close.
const sleeperEnv = "DIRECT_TEST_SLEEPER"

func TestMain(m *testing.M) {
	if os.Getenv(sleeperEnv) != "" {
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	}
	if slices.Contains(os.Args, "vcpnode-direct") {
		if err := fakeHost(); err != nil {
			fmt.Fprintln(os.Stderr, "fake host:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeHost() error {
	script, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	if string(script) != hostScript {
		return fmt.Errorf("host script: %d bytes, want %d", len(script), len(hostScript))
	}
	conn, err := net.Dial("tcp", os.Getenv(envChannel))
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(os.Getenv(envChannelToken) + "\n")); err != nil {
		return err
	}
	enc := json.NewEncoder(conn)
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		var m outMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return err
		}
		switch m.T {
		case "load":
			err = enc.Encode(map[string]any{"t": "imported", "exports": []string{"processToolCall"}})
		case "init":
			err = enc.Encode(map[string]any{"t": "ready"})
		case "call":
			child, serr := startSleeper()
			if serr != nil {
				err = enc.Encode(map[string]any{"t": "result", "id": m.ID, "error": serr.Error()})
			} else {
				err = enc.Encode(map[string]any{"t": "result", "id": m.ID, "value": map[string]int{"host": os.Getpid(), "child": child}})
			}
		case "shutdown":
			return enc.Encode(map[string]any{"t": "bye"})
		}
		if err != nil {
			return err
		}
	}
	return sc.Err()
}

func startSleeper() (int, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	p, err := os.StartProcess(self, []string{self}, &os.ProcAttr{
		Env:   append(os.Environ(), sleeperEnv+"=1"),
		Files: []*os.File{null, null, null},
	})
	if err != nil {
		return 0, err
	}
	defer p.Release()
	return p.Pid, nil
}

func TestWindowsHostRunsAndIsKilledWithItsChildren(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp("", "direct-test-") // not t.TempDir: its RemoveAll fails under Wine 8
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "Fast")
	t.Cleanup(func() {
		for _, p := range []string{filepath.Join(dir, "index.js"), filepath.Join(dir, "plugin-manifest.json"), dir, root} {
			if err := os.Remove(p); err != nil {
				t.Error(err)
			}
		}
	})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tp := testPlugins["Fast"]
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(tp.files["index.js"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin-manifest.json"), []byte(`{"name":"Fast",`+tp.manifest+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(hostScript) <= 4096 {
		t.Fatalf("host.js is %d bytes: this test no longer checks a script larger than a Windows pipe buffer", len(hostScript))
	}
	h := newTestHost(t, Options{})
	l := h.Load(scanDirect(t, root), Settings{Node: self})
	if len(l.Unsupported) != 0 {
		t.Fatalf("unsupported: %+v", l.Unsupported)
	}
	v, err := invoke(nil, findTool(t, l, "Fast"), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Host, Child int }
	if err := json.Unmarshal(v.(json.RawMessage), &got); err != nil || got.Host == 0 || got.Child == 0 {
		t.Fatalf("result %s: %v", asJSON(t, v), err)
	}
	var hs []windows.Handle
	for _, pid := range []int{got.Host, got.Child} {
		ph, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
		if err != nil {
			t.Fatalf("open %d: %v", pid, err)
		}
		defer windows.CloseHandle(ph)
		hs = append(hs, ph)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for i, ph := range hs {
		if ev, err := windows.WaitForSingleObject(ph, uint32(waitLimit/time.Millisecond)); err != nil || ev != windows.WAIT_OBJECT_0 {
			t.Errorf("%s still running after Close", []string{"the host", "its child"}[i])
		}
	}
	if n := h.Running(); n != 0 {
		t.Errorf("%d hosts running after Close", n)
	}
}
