package node

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// Issue 10: a [placeholders] command whose grandchild calls setsid (its
// own session and process group) and ignores SIGTERM: the node runs
// commands as process trees, so the grandchild is gone when the run is.
func TestPlaceholderCommandLeavesNothingRunning(t *testing.T) {
	dir := t.TempDir()
	if strings.ContainsAny(dir, " '\"$\\`") {
		t.Skipf("temporary directory %q would need shell quoting", dir)
	}
	// The token marks the grandchild (it inherits our environment), so the
	// cleanup kills nothing else.
	token := "VCPNODE_TEST_ESCAPE=" + dir
	t.Setenv("VCPNODE_TEST_ESCAPE", dir)
	fifo := filepath.Join(dir, "fifo")
	cfg := config.Default()
	cfg.Placeholders.Command = []config.CommandPlaceholderConfig{{Name: "Escape", Command: "mkfifo " + fifo + " || exit 9\n" +
		`setsid sh -c 'trap "" TERM; echo $$ > ` + fifo + `; exec sleep 600' </dev/null >/dev/null 2>&1 &` + "\n" +
		"read gc < " + fifo + "; echo $gc"}}
	resp, _, err := EvaluatePlaceholders(t.Context(), cfg, zerolog.New(zerolog.NewTestWriter(t)))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Placeholders) != 1 {
		t.Fatalf("placeholders = %+v", resp.Placeholders)
	}
	pid, err := strconv.Atoi(resp.Placeholders[0].Value)
	if err != nil || pid <= 0 || pid == os.Getpid() {
		t.Fatalf("value %q is no grandchild pid (%v)", resp.Placeholders[0].Value, err)
	}
	t.Cleanup(func() {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err == nil && bytes.Contains(env, []byte("\x00"+token+"\x00")) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if !proctreetest.Gone(pid) {
		t.Fatalf("the command's setsid grandchild %d outlived the run", pid)
	}
}
