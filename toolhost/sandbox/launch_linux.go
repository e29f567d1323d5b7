package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// A confined command is started through the launcher: the running binary
// (/proc/self/exe, the daemon or a test binary) started again under the
// name launchArg0. Its init (launcher_linux.go) reads the launch from a
// memfd, confines itself and execs the command, so that everything the
// confinement forbids (clone3 among others) is forbidden from the first
// instruction of the command on, and no daemon thread is ever confined.
const launchArg0 = "vcpnode-sandbox-launch"

// launch is what the launcher is told: the policy and the command.
// It travels encoded by encodeLaunch (launchenc_linux.go).
type launch struct {
	Policy *policy
	Path   string
	Args   []string
	// A waiting launcher (pool_linux.go) was started before the call, so
	// it is also told what a start would have given it: the environment,
	// the working directory ("": the daemon's) and, for each of the
	// command's fds from 0 on, the index of the file received with the
	// launch that goes there (-1: none).
	Env []string
	Dir string
	Fds []int
}

// launchFailure is what the launcher writes on its status pipe when it
// cannot start the command; a successful exec closes the pipe unwritten.
type launchFailure struct {
	Step  string `json:"step"`
	Errno int    `json:"errno,omitempty"`
	Msg   string `json:"msg"`
	// NotEnforced: the policy asked for what this kernel cannot give (Strict).
	NotEnforced bool `json:"not_enforced,omitempty"`
}

// launchFiles are the two files handed to a launcher: the launch to read
// and the write end of the status pipe.
type launchFiles struct {
	path          string   // the command's
	spec          *os.File // memfd holding the launch; nil for a waiting launcher
	status, statw *os.File
}

// newLaunchFiles writes r's launch into a memfd and opens the status pipe.
func (r *Run) newLaunchFiles(path string, args []string) (*launchFiles, error) {
	data := encodeLaunch(nil, &launch{Policy: r.pol, Path: path, Args: args})
	fd, err := unix.MemfdCreate("vcpnode-launch", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox launcher: memfd_create: %w", err)
	}
	spec := os.NewFile(uintptr(fd), "vcpnode-launch")
	if _, err := spec.Write(data); err != nil {
		spec.Close()
		return nil, fmt.Errorf("sandbox launcher: %w", err)
	}
	lf, err := newStatusPipe(path)
	if err != nil {
		spec.Close()
		return nil, err
	}
	lf.spec = spec
	return lf, nil
}

// newStatusPipe opens the status pipe of a launch of path.
// It is a blocking pipe, outside the runtime's poller: the start's wait
// for its verdict is a plain read, which returns at the exec without a
// trip through the poller (and no epoll registrations to make and undo).
func newStatusPipe(path string) (*launchFiles, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("sandbox launcher: status pipe: %w", err)
	}
	status, statw := os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1")
	return &launchFiles{path: path, status: status, statw: statw}, nil
}

// args is the launcher's argv when its files are at fds first and first+1
// and it makes the call's namespaces or not (ns).
func (lf *launchFiles) args(first int, ns bool) []string {
	return []string{launchArg0, strconv.Itoa(first), strconv.Itoa(first + 1), launcherArg(ns)}
}

// wait closes the daemon's copies of what the launcher got and waits for
// its verdict: nil once the command was exec'd.
func (lf *launchFiles) wait() error {
	lf.closeSent()
	defer lf.status.Close()
	data, err := io.ReadAll(lf.status)
	if err != nil {
		return fmt.Errorf("sandbox launcher: %w", err)
	}
	if len(data) == 0 {
		return nil
	}
	var f launchFailure
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("sandbox launcher: unreadable status %q", data)
	}
	switch {
	case f.Step == "exec" && f.Errno != 0:
		// As a plain start reports it.
		return &os.PathError{Op: "fork/exec", Path: lf.path, Err: syscall.Errno(f.Errno)}
	case f.NotEnforced:
		return fmt.Errorf("%w: %s", ErrNotEnforced, f.Msg)
	case f.Errno != 0:
		return fmt.Errorf("sandbox launcher: %s: %s: %w", f.Step, f.Msg, syscall.Errno(f.Errno))
	}
	return fmt.Errorf("sandbox launcher: %s: %s", f.Step, f.Msg)
}

// closeSent closes the daemon's copies of what the launcher got.
func (lf *launchFiles) closeSent() {
	if lf.spec != nil {
		lf.spec.Close()
	}
	lf.statw.Close()
}

// abandon closes everything after a start that did not happen.
func (lf *launchFiles) abandon() {
	lf.closeSent()
	lf.status.Close()
}

// startProcess starts the run: unconfined as is, confined through the launcher.
func (r *Run) startProcess(trees *proctree.Manager, a *os.ProcAttr) (*os.Process, *proctree.Tree, error) {
	if r.pol == nil {
		return trees.StartProcess(r.Path, r.Args, a)
	}
	if proc, tree, err, ok := r.launchers.launch(trees, r, a); ok {
		return proc, tree, err
	}
	lf, err := r.newLaunchFiles(r.Path, r.Args)
	if err != nil {
		return nil, nil, err
	}
	la := *a
	la.Files = append(append([]*os.File(nil), a.Files...), lf.spec, lf.statw)
	la.Sys = r.launchSys()
	stepEnd("daemon: launch written")
	proc, tree, err := trees.StartProcessWith(r.prepare, "/proc/self/exe", lf.args(len(a.Files), r.pol.NS != nil), &la)
	if err != nil {
		lf.abandon()
		if !errors.Is(err, ErrLimitNotApplied) && (errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission)) {
			return nil, nil, fmt.Errorf("sandbox launcher: %w", err)
		}
		return nil, nil, err
	}
	stepEnd("daemon: launcher started")
	if err := lf.wait(); err != nil {
		endFailed(proc, tree)
		return nil, nil, err
	}
	stepEnd("daemon: command running")
	return proc, tree, nil
}

// endFailed ends the tree of a launcher that did not start its command.
func endFailed(proc *os.Process, tree *proctree.Tree) {
	tree.KillAll()
	_, _ = proc.Wait()
	_ = tree.KillAndWait(launchKillWait)
	tree.Release()
}

// launchKillWait bounds the wait for a failed launcher's tree to end.
const launchKillWait = 5e9
