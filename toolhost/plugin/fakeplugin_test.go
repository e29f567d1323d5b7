//go:build unix

package plugin

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary re-executes itself as an escaping plugin when
// fakeRoleEnv is set (the plugin gets it from its config.env):
//   - "leader" (the plugin) ignores SIGTERM, starts a child, waits until
//     the grandchild is ready, then either hangs (mode "hang") or answers
//     and exits (mode "answer", for asynchronous plugins);
//   - "child" starts the grandchild and exits once it is ready, orphaning it;
//   - "grandchild" calls setsid (its own session and process group),
//     ignores SIGTERM and sleeps, its output on /dev/null.
//
// Each writes its pid to <role>.pid in the plugin folder (its working
// directory) before the leader reads its stdin, so a test knows the whole
// tree exists before it cancels anything.
const (
	fakeRoleEnv = "VCPNODE_TEST_FAKE_ROLE"
	fakeModeEnv = "VCPNODE_TEST_FAKE_MODE"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(fakeRoleEnv); role != "" {
		os.Exit(runFake(role))
	}
	os.Exit(m.Run())
}

func runFake(role string) int {
	signal.Ignore(syscall.SIGTERM)
	fail := func(err error) int { fmt.Fprintln(os.Stderr, role+":", err); return 1 }
	switch role {
	case "leader", "child":
		next := map[string]string{"leader": "child", "child": "grandchild"}[role]
		r, w, err := os.Pipe()
		if err != nil {
			return fail(err)
		}
		err = startFake(next, w)
		w.Close()
		if err != nil {
			return fail(err)
		}
		_, _ = r.Read(make([]byte, 1)) // EOF once the grandchild is ready
		if role == "child" {
			closeReady()
			return 0
		}
		writePid(role)
		_, _ = io.Copy(io.Discard, os.Stdin)
		if os.Getenv(fakeModeEnv) == "answer" {
			fmt.Println(`{"status":"success","result":"accepted; the grandchild keeps working"}`)
			return 0
		}
		time.Sleep(10 * time.Minute)
		return 0
	case "grandchild":
		if _, err := syscall.Setsid(); err != nil {
			return fail(err)
		}
		writePid(role)
		closeReady()
		time.Sleep(10 * time.Minute)
		return 0
	}
	return 2
}

// closeReady closes fd 3, the pipe the parent waits on.
func closeReady() { _ = os.NewFile(3, "ready").Close() }

// startFake starts the test binary as role with ready as its fd 3 and the
// child's own ready pipe passed down (the child shares it with the grandchild).
func startFake(role string, ready *os.File) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, fakeRoleEnv+"=") {
			env = append(env, kv) // a duplicate key would keep the parent's role
		}
	}
	env = append(env, fakeRoleEnv+"="+role)
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	_, err = os.StartProcess(self, []string{self}, &os.ProcAttr{Env: env, Files: []*os.File{null, null, null, ready}})
	return err
}

func writePid(role string) {
	_ = os.WriteFile(role+".pid.tmp", []byte(strconv.Itoa(os.Getpid())), 0o644)
	_ = os.Rename(role+".pid.tmp", role+".pid")
}

// escapePlugin writes a plugin folder Escape under root whose command is
// this test binary in the given mode ("hang" or "answer").
func escapePlugin(t *testing.T, root, pluginType, mode string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(self, " \t'\"$\\") {
		t.Skipf("test binary path %q would need shell quoting in a manifest", self)
	}
	dir := filepath.Join(root, "Escape")
	writeFile(t, dir, manifestFile, fmt.Sprintf(
		`{"name":"Escape","pluginType":%q,"entryPoint":{"command":%q},"communication":{"protocol":"stdio","timeout":600000}}`,
		pluginType, self))
	writeFile(t, dir, configEnvFile, fakeRoleEnv+"=leader\n"+fakeModeEnv+"="+mode+"\n")
	return dir
}
