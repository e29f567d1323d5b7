package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/vcpnode/vcpnode/controlapi"
	"github.com/vcpnode/vcpnode/internal/controltest"
)

// The attacks of a tool's process, run by this test binary from inside a
// confined plugin (see TestEscapedProcessesEndWithTheirCall):
//   - attackControlEnv=SOCK: call every endpoint of the control socket and
//     print what each answered;
//   - attackClone3Env=1 CMD ARGS…: start CMD in the root cgroup with
//     clone3's CLONE_INTO_CGROUP, in a session of its own and with an empty
//     environment, and exit, orphaning it. It prints "refused: …" when the
//     kernel refuses, or "unguarded: …" (and starts nothing) where neither a
//     syscall filter nor a cgroup namespace would stop it.
const (
	attackControlEnv = "VCPNODE_TEST_ATTACK_CONTROL"
	attackClone3Env  = "VCPNODE_TEST_ATTACK_CLONE3"
)

func init() {
	if sock := os.Getenv(attackControlEnv); sock != "" {
		os.Exit(attackControl(sock))
	}
	if os.Getenv(attackClone3Env) != "" {
		os.Exit(attackClone3(os.Args[1:]))
	}
}

// controlEndpoints is every route of the control API.
var controlEndpoints = controltest.Endpoints("Deploy")

// attackControl prints one line per endpoint: "refused PATH" when the
// daemon refused a tool's process, else what it answered.
func attackControl(sock string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := controlapi.NewControlClient(sock)
	defer c.Close()
	for _, e := range controlEndpoints {
		err := c.Do(ctx, e.Method, e.Path, nil, nil)
		var api *controlapi.APIError
		if errors.As(err, &api) && api.Status == http.StatusForbidden && strings.Contains(err.Error(), "a process a tool started") {
			fmt.Printf("refused %s %s\n", e.Method, e.Path)
		} else {
			fmt.Printf("answered %s %s: %v\n", e.Method, e.Path, err)
		}
	}
	return 0
}

// attackClone3 starts argv in the root of the cgroup2 hierarchy.
func attackClone3(argv []string) int {
	mnt, nsdelegate := cgroup2Mount()
	if mnt == "" {
		fmt.Println("unguarded: no cgroup2 mounted here")
		return 0
	}
	// clone3 with no arguments answers EINVAL where it is allowed at all.
	const sysClone3 = 435
	_, _, errno := syscall.RawSyscall(sysClone3, 0, 0, 0)
	own, _ := os.ReadFile("/proc/self/cgroup")
	fenced := nsdelegate && strings.Contains(string(own), "0::/\n")
	if errno == syscall.EINVAL && !fenced {
		fmt.Printf("unguarded: clone3 is allowed (no syscall filter) and %s is no cgroup namespace boundary (nsdelegate %v)\n", mnt, nsdelegate)
		return 0
	}
	fd, err := syscall.Open(mnt, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		fmt.Println("refused: open", mnt+":", err)
		return 0
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Start(); err != nil {
		fmt.Println("refused:", err)
		return 0
	}
	fmt.Println("escaped: pid", cmd.Process.Pid)
	return 0
}

// cgroup2Mount is where the cgroup2 hierarchy is mounted and whether with
// nsdelegate.
func cgroup2Mount() (string, bool) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		left, right, ok := strings.Cut(sc.Text(), " - ")
		fields, super := strings.Fields(left), strings.Fields(right)
		if ok && len(fields) > 4 && len(super) > 2 && super[0] == "cgroup2" {
			return fields[4], strings.Contains(","+super[2]+",", ",nsdelegate,")
		}
	}
	return "", false
}
