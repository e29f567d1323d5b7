package plugin

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/inheritfd"
	"github.com/vcpnode/vcpnode/toolhost/proctree/proctreetest"
)

// The test binary re-executes itself as a plugin whose tree tries to
// outlive it when fakeRoleEnv is set (the plugin gets it from its
// config.env):
//   - "leader" (the plugin) ignores SIGTERM, starts a child and waits for
//     it, writes leader.pid, reads its stdin, then either hangs (mode
//     "hang") or answers and exits (mode "answer", for asynchronous
//     plugins);
//   - "child" starts the grandchild, proctreetest's escapee (on Unix in a
//     session of its own, ignoring SIGTERM), and exits once it runs,
//     orphaning it; the escapee writes grandchild.pid.
//
// The pid files are in the plugin folder (the working directory) before the
// leader reads its stdin, so a test knows the whole tree exists before it
// cancels anything.
const (
	fakeRoleEnv = "VCPNODE_TEST_FAKE_ROLE"
	fakeModeEnv = "VCPNODE_TEST_FAKE_MODE"
)

func TestMain(m *testing.M) {
	proctreetest.RunEscapeeIfAsked()
	// As the daemon does at start: what the runner left open (flock's lock
	// on fd 3) reaches no plugin, so cold and warm children compare equal.
	if err := inheritfd.KeepFromChildren(); err != nil {
		fmt.Fprintln(os.Stderr, "keep inherited descriptors:", err)
		os.Exit(1)
	}
	if role := os.Getenv(fakeRoleEnv); role != "" {
		os.Exit(runFake(role))
	}
	os.Exit(m.Run())
}

func runFake(role string) int {
	signal.Ignore(syscall.SIGTERM)
	fail := func(err error) int { fmt.Fprintln(os.Stderr, role+":", err); return 1 }
	switch role {
	case "leader":
		if err := runChild(); err != nil {
			return fail(err)
		}
		proctreetest.WritePid("leader.pid")
		_, _ = io.Copy(io.Discard, os.Stdin)
		if os.Getenv(fakeModeEnv) == "answer" {
			fmt.Println(`{"status":"success","result":"accepted; the grandchild keeps working"}`)
			return 0
		}
		time.Sleep(10 * time.Minute)
		return 0
	case "child":
		// On Windows the grandchild holds the plugin's output pipe, as
		// a descendant there would; on Unix its output is /dev/null.
		var out *os.File
		if runtime.GOOS == "windows" {
			out = os.Stdout
		}
		if err := proctreetest.StartEscapee("grandchild.pid", out); err != nil {
			return fail(err)
		}
		return 0
	}
	return 2
}

// runChild runs the test binary as the child, with the leader's stdout on
// Windows and /dev/null on Unix, and returns once it has exited.
func runChild() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), fakeRoleEnv+"=") {
			cmd.Env = append(cmd.Env, kv) // a duplicate key would keep the parent's role
		}
	}
	cmd.Env = append(cmd.Env, fakeRoleEnv+"=child")
	if runtime.GOOS == "windows" {
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	}
	return cmd.Run()
}

// escapePlugin writes a plugin folder Escape under root whose command is
// this test binary in the given mode ("hang" or "answer").
func escapePlugin(t *testing.T, root, pluginType, mode string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && strings.ContainsAny(self, " \t'\"$\\") {
		t.Skipf("test binary path %q would need shell quoting in a manifest", self)
	}
	dir := filepath.Join(root, "Escape")
	writeFile(t, dir, manifestFile, fmt.Sprintf(
		`{"name":"Escape","pluginType":%q,"entryPoint":{"command":%q},"communication":{"protocol":"stdio","timeout":600000}}`,
		pluginType, self))
	writeFile(t, dir, configEnvFile, fakeRoleEnv+"=leader\n"+fakeModeEnv+"="+mode+"\n")
	return dir
}
