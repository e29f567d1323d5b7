package proctree

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// StartCmd starts a command as the leader of a new tree, for callers that
// keep exec.Cmd's pipe copying and WaitDelay: newCmd builds the command,
// StartCmd replaces its SysProcAttr with the tree's and adds the tree's
// marker to its Env (a nil Env stands for the daemon's environment). It
// must not use CommandContext's Cancel to kill: that would reach the leader
// alone; watch the context and call Tree.KillAll instead.
//
// An exec.Cmd cannot be started twice, so when the system refuses to start
// a process into a cgroup and the Manager falls back (as in StartProcess),
// newCmd is called once more for a fresh command.
func (m *Manager) StartCmd(newCmd func() *exec.Cmd) (*exec.Cmd, *Tree, error) {
	return m.StartCmdWith(nil, newCmd)
}

// StartCmdWith is StartCmd with prepare called on each new tree before its
// leader starts (see StartProcessWith).
func (m *Manager) StartCmdWith(prepare func(*Tree) error, newCmd func() *exec.Cmd) (*exec.Cmd, *Tree, error) {
	cmd, t, err := m.startCmd(prepare, newCmd)
	if err == nil || t == nil || t.mode != ModeCgroup || notTheCgroup(err) {
		return cmd, t, err
	}
	if derr := m.demote(); derr != nil {
		return nil, nil, err
	}
	cmd2, t2, err2 := m.startCmd(prepare, newCmd)
	if err2 != nil {
		return nil, nil, err2
	}
	m.log.Warn().Err(err).Str("mode", m.Mode().String()).
		Msg("cannot start processes in their own cgroup; tracking process trees by walking /proc instead")
	return cmd2, t2, nil
}

// startCmd is one attempt; on a failed start it returns the released tree
// (for its mode) with the error.
func (m *Manager) startCmd(prepare func(*Tree) error, newCmd func() *exec.Cmd) (*exec.Cmd, *Tree, error) {
	t, err := m.newPreparedTree(prepare)
	if err != nil {
		return nil, nil, err
	}
	cmd := newCmd()
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = withMarker(env, t)
	cmd.SysProcAttr = withCallerSys(t.SysProcAttr(), cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		t.Release()
		return nil, t, err
	}
	t.Started(cmd.Process.Pid)
	if serr := t.startError(); serr != nil {
		_ = cmd.Wait() // killed by Started (Windows: not in its job); release it
		t.Release()
		return nil, nil, serr
	}
	return cmd, t, nil
}

// notTheCgroup recognises start failures that have nothing to do with the
// cgroup (a missing program or working directory…): they must not switch
// the Manager away from cgroups for good.
func notTheCgroup(err error) bool {
	var execErr *exec.Error // the program was not found before any fork
	if errors.As(err, &execErr) {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.ENOENT, syscall.ENOTDIR, syscall.ENOEXEC,
		syscall.ETXTBSY, syscall.E2BIG, syscall.ELOOP, syscall.ENAMETOOLONG} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}
