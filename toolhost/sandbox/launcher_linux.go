package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/cap"

	"github.com/vcpnode/vcpnode/internal/inheritfd"
)

// The launcher side: a binary that imports this package and is started
// under launchArg0 (launch_linux.go) never reaches its main. It runs here,
// before any other package that sorts after this one is initialised.
// argv[3] says whether it makes the call's namespaces (ns_linux.go).
func init() {
	if len(os.Args) == 4 && os.Args[0] == launchArg0 {
		stepEnd("launcher: started")
		if os.Args[1] == poolArg {
			dropStrays(os.Args[2])
		}
		launcherMain(os.Args[1], os.Args[2], os.Args[3] == nsArg)
	}
}

// nsErr is why the launcher could not make the call's namespaces; its
// launch then fails with it.
var nsErr error

// launchJob is a launch as the launcher got it: the command's environment,
// its fds 0 to nfds-1 in place, and the status pipe at statusFd
// (close-on-exec) with fail reporting on it.
type launchJob struct {
	l        *launch
	env      []string
	nfds     int
	statusFd int
	fail     func(step string, err error)
}

// launcherMain is the launcher, argv[1] and argv[2] its files (the
// launch's memfd and the status pipe, or poolArg and its socket), ns
// whether it makes the call's namespaces. Everything from the namespaces
// to the exec happens on one thread, started first: libcap's launch
// thread (FuncLauncher), where capability calls change that thread alone,
// where elsewhere each would stop and signal every thread of the runtime —
// dozens of times, for the bounding set — which is what a per-call
// launcher cannot afford. On it, the launcher makes the namespaces (the
// one place, before it reads or waits for a launch: they hold nothing of
// any call), gets its launch, confines the thread and execs the command:
// execve keeps the calling thread only, so the command gets exactly that
// thread's confinement. In the call's namespaces the thread forks the
// command instead and the launcher stays (init_linux.go): the status pipe
// is then closed once the command runs. It never returns.
func launcherMain(arg1, arg2 string, ns bool) {
	var job *launchJob
	var inherited []uintptr
	step := "read"
	pid := 0
	_, err := cap.FuncLauncher(func(any) error {
		stepEnd("launcher: confining thread")
		if ns {
			// Above the fds of a command and the files handed with its launch.
			floor := maxLaunchFds
			if fd, err := strconv.Atoi(arg2); err == nil {
				floor = max(floor, fd+1)
			}
			theInit, nsErr = (&nsPlan{}).enter(floor)
		}
		if arg1 == poolArg {
			job = waitForLaunch(arg2)
		} else {
			job = readLaunchJob(arg1, arg2)
		}
		// Nothing else the launcher holds (fds its starter leaked) reaches the command.
		if err := inheritfd.CloseOnExecFrom(max(job.nfds, 3)); err != nil {
			return err
		}
		inherited = inheritedFds(job.nfds)
		step = "confine"
		if err := job.l.Policy.apply(); err != nil {
			return err
		}
		step = "exec"
		if job.l.Policy.NS == nil {
			return syscall.Exec(job.l.Path, job.l.Args, job.env) // returns only on failure
		}
		var err error
		pid, err = syscall.ForkExec(job.l.Path, job.l.Args, &syscall.ProcAttr{Env: job.env, Files: inherited})
		stepEnd("launcher: command forked and exec'd")
		if err == nil {
			// The command runs: the daemon's EOF, at once (not after this
			// thread's end reached the main one), once the launcher
			// outlives the signals the daemon may now send the tree.
			ignoreTreeSignals()
			_ = unix.Close(job.statusFd)
		}
		return err
	}).Launch(nil)
	if job == nil {
		// The thread never ran: a launcher started for its call can still
		// say so on the status pipe; a waiting one has none yet.
		if statusFd, serr := strconv.Atoi(arg2); serr == nil && arg1 != poolArg && err != nil {
			statusReporter(statusFd)("confine", err)
		}
		os.Exit(126)
	}
	if err == nil && pid > 0 {
		superviseCommand(pid, inheritedOpen(inherited))
	}
	if err == nil {
		err = errors.New("the command was not started")
	}
	job.fail(step, err)
}

// readLaunchJob reads the launch of a launcher started for it from the
// memfd at fd specArg, with the status pipe at fd statusArg; the
// command's fds are those below the memfd's (launchFiles.args).
func readLaunchJob(specArg, statusArg string) *launchJob {
	statusFd, err := strconv.Atoi(statusArg)
	if err != nil {
		os.Exit(126)
	}
	unix.CloseOnExec(statusFd) // a successful exec closes it: the daemon's EOF
	fail := statusReporter(statusFd)
	l, err := readLaunch(specArg)
	if err != nil {
		fail("read", err)
	}
	first, _ := strconv.Atoi(specArg)
	stepEnd("launcher: launch read")
	return &launchJob{l: l, env: os.Environ(), nfds: first, statusFd: statusFd, fail: fail}
}

// statusReporter returns how the launcher reports a failed step on the
// status pipe at fd statusFd (close-on-exec) and exits.
func statusReporter(statusFd int) func(step string, err error) {
	return func(step string, err error) {
		f := launchFailure{Step: step, Msg: err.Error(), NotEnforced: errors.Is(err, ErrNotEnforced)}
		var errno syscall.Errno
		if errors.As(err, &errno) {
			f.Errno = int(errno)
		}
		data, _ := json.Marshal(f)
		_, _ = unix.Write(statusFd, data)
		os.Exit(127)
	}
}

// readLaunch reads the launch from the memfd at fd specArg and closes it.
func readLaunch(specArg string) (*launch, error) {
	fd, err := strconv.Atoi(specArg)
	if err != nil {
		return nil, fmt.Errorf("launch fd %q: %w", specArg, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("launch fd: %w", err)
	}
	data := make([]byte, st.Size)
	for off := 0; off < len(data); {
		n, err := unix.Pread(fd, data[off:], int64(off))
		if err != nil {
			return nil, fmt.Errorf("read launch: %w", err)
		}
		if n == 0 {
			return nil, errors.New("read launch: short")
		}
		off += n
	}
	_ = unix.Close(fd)
	l, err := decodeLaunch(data)
	if err != nil {
		return nil, fmt.Errorf("read launch: %w", err)
	}
	if l.Policy == nil || l.Path == "" || len(l.Args) == 0 {
		return nil, errors.New("read launch: incomplete")
	}
	return l, nil
}

// apply confines the calling thread (and, where the kernel's unit is the
// process, the process) in this order: the limit groups and rlimits, the
// capabilities, no_new_privs and Landlock, the syscall filter last (it
// denies what the steps before need). The cgroup files are out of reach
// once Landlock is in force, so they come first.
func (p *policy) apply() error {
	switch {
	case p.NS != nil && theInit == nil:
		if nsErr != nil {
			return nsErr
		}
		return errors.New("namespaces: the launcher was started without them")
	case p.NS == nil && theInit != nil:
		return errors.New("namespaces: the launcher was started with them for a call without")
	}
	// The namespace's init, made before the launch, gets the call's limits
	// as the launcher does: as if it were forked now.
	pids := []int{os.Getpid()}
	if theInit != nil {
		pids = append(pids, theInit.pid)
	}
	for _, tasks := range p.Tasks {
		for _, pid := range pids {
			// cgroup.procs moves every thread of the process, the exec'ing one included.
			if err := os.WriteFile(filepath.Join(filepath.Dir(tasks), "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
				return fmt.Errorf("join limit group: %w", err)
			}
		}
	}
	for res, v := range p.Rlimits {
		for _, pid := range pids {
			if err := unix.Prlimit(pid, res, &unix.Rlimit{Cur: v, Max: v}, nil); err != nil {
				return fmt.Errorf("rlimit %d: %w", res, err)
			}
		}
	}
	stepEnd("confine: limit groups and rlimits")
	if theInit != nil {
		if err := p.hide(); err != nil {
			return err
		}
		stepEnd("confine: hidden trees covered")
		if err := p.readOnlyBut(); err != nil {
			return err
		}
		stepEnd("confine: read-only mounts but the writable grants")
	}
	if err := dropCaps(); err != nil {
		return err
	}
	stepEnd("confine: capabilities dropped")
	if err := p.restrictThread(); err != nil {
		return err
	}
	stepEnd("confine: Landlock")
	if err := p.loadFilter(); err != nil {
		return err
	}
	stepEnd("confine: syscall filter")
	return nil
}
