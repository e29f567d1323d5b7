package config

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

const envKeyHelper = "VCPNODE_TEST_TAKE_ENV_KEY_HELPER"

// TestTakeEnvKeyHelper is the child process of TestTakeEnvKeyLeavesNoTrace.
func TestTakeEnvKeyHelper(t *testing.T) {
	if os.Getenv(envKeyHelper) != "1" {
		t.Skip("helper process for TestTakeEnvKeyLeavesNoTrace; runs only as its child")
	}
	key, err := TakeEnvKey()
	_, stillSet := os.LookupEnv(EnvKey)
	fmt.Printf("taken %d %v %v\n", len(key), stillSet, err)
	// Wait for the parent to read /proc/<pid>/environ.
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// The key given in $VCPNODE_KEY is gone from the process's environment as
// other processes of the user see it (/proc/<pid>/environ), and from what
// children inherit.
func TestTakeEnvKeyLeavesNoTrace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/<pid>/environ, which only Linux has")
	}
	const key = "Env-Key_Secret.0123456789"
	cmd := exec.Command(os.Args[0], "-test.run=^TestTakeEnvKeyHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), envKeyHelper+"=1", EnvKey+"="+key)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("helper did not exit")
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper said nothing: %v", err)
	}
	if want := fmt.Sprintf("taken %d false <nil>\n", len(key)); line != want {
		t.Fatalf("helper said %q, want %q (TakeEnvKey's value, whether the variable is still set, its error)", line, want)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(environ, []byte(envKeyHelper+"=1")) {
		t.Fatalf("read the wrong environment: %q", environ)
	}
	if bytes.Contains(environ, []byte(key)) || bytes.Contains(environ, []byte(key[:8])) {
		t.Errorf("/proc/<pid>/environ still holds the key: %q", strings.ReplaceAll(string(environ), "\x00", " "))
	}
}
