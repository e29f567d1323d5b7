package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/testwait"
)

// taskAttacks go for another process of the same uid, VICTIM (the daemon,
// another tool), by what Landlock's scoping of signals and ptrace does not
// cover: its resource limits (RLIMIT_NOFILE 0 and it can open nothing,
// RLIMIT_AS and it cannot allocate), its nice value, scheduling policy
// (SCHED_IDLE starves it), CPU affinity and I/O priority; and by what it
// does: a SIGIO through F_SETOWN, pidfd_send_signal, process_madvise,
// migrate_pages, move_pages, get_robust_list.
const taskAttacks = libcPrelude + `
import fcntl, platform, resource
NR.update({"x86_64": {"ioprio_set": 251, "migrate_pages": 256, "move_pages": 279, "get_robust_list": 274, "setpriority": 141},
    "aarch64": {"ioprio_set": 30, "migrate_pages": 238, "move_pages": 239, "get_robust_list": 100, "setpriority": 140}}[platform.machine()])
NR.update({"pidfd_open": 434, "pidfd_send_signal": 424, "process_madvise": 440})
v = VICTIM
try_("prlimit set", lambda: resource.prlimit(v, resource.RLIMIT_NOFILE, (0, 0)))
try_("prlimit get", lambda: resource.prlimit(v, resource.RLIMIT_NOFILE))
try_("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, v, 19))
try_("setpriority high bits", lambda: sc("setpriority", 1 << 32, v, 19))  # PRIO_PROCESS to the kernel
try_("sched idle", lambda: os.sched_setscheduler(v, os.SCHED_IDLE, os.sched_param(0)))
try_("sched affinity", lambda: os.sched_setaffinity(v, {0}))
try_("ioprio", lambda: sc("ioprio_set", 1, v, 3 << 13))  # IOPRIO_WHO_PROCESS, IOPRIO_CLASS_IDLE
mask = ctypes.c_ulong(1)
try_("migrate_pages", lambda: sc("migrate_pages", v, 64, ctypes.addressof(mask), ctypes.addressof(mask)))
try_("move_pages", lambda: sc("move_pages", v, 0, 0, 0, 0, 0))
head, size = ctypes.c_void_p(), ctypes.c_size_t()
try_("get_robust_list", lambda: sc("get_robust_list", v, ctypes.addressof(head), ctypes.addressof(size)))
def pidfd(fn):
    p = sc("pidfd_open", v, 0)
    try:
        fn(p)
    finally:
        os.close(p)
try_("pidfd_send_signal", lambda: pidfd(lambda p: sc("pidfd_send_signal", p, 0, 0, 0)))
iov = (ctypes.c_void_p * 2)(0, 4096)
try_("process_madvise", lambda: pidfd(lambda p: sc("process_madvise", p, ctypes.addressof(iov), 1, 20, 0)))
def sigio():
    r, w = os.pipe()
    fcntl.fcntl(r, fcntl.F_SETOWN, v)
    fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
    os.write(w, b"x")  # SIGIO to the owner: its default action ends it
    os.close(r)
    os.close(w)
try_("sigio", sigio)
try_("self prlimit", lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
try_("self setpriority", lambda: os.setpriority(os.PRIO_PROCESS, 0, 1))
try_("self sched", lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0)))
`

// victimState is what taskAttacks would change of pid, read from its /proc.
func victimState(t *testing.T, pid int) string {
	t.Helper()
	limits, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	var open string
	for _, l := range strings.Split(string(limits), "\n") {
		if strings.HasPrefix(l, "Max open files") {
			open = strings.Join(strings.Fields(l), " ")
		}
	}
	// Nice (field 19 of stat, 17 after the name), policy (41, 39),
	// and whether it still runs.
	return "alive " + strconv.FormatBool(f[0] != "Z") + " nice " + f[16] + " policy " + f[38] + "; " + open
}

// TestAttackOtherTasks: a confined tool changes nothing of a process
// outside its call that shares its uid — the daemon, another tool — though
// it can name it (no PID namespace: where the kernel gives none): not its
// limits, priority, scheduling, affinity or I/O priority (the syscall
// filter refuses them for any process but the caller, pid 0), nor signals
// it by a pidfd or SIGIO, nor reads or moves its memory (Landlock's
// scoping, and commoncap's rule that a task with fewer capabilities may
// not renice one with more). With the namespaces, the victim is the
// call's own init. The caller's own, as pid 0, are left to it.
// Unconfined, the same script changes the victim (the attack is real).
func TestAttackOtherTasks(t *testing.T) {
	t.Parallel()
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c
	}
	victim := start()
	before := victimState(t, victim.Process.Pid)
	script := strings.Replace(taskAttacks, "VICTIM", strconv.Itoa(victim.Process.Pid), 1)
	refused := []string{"prlimit set", "prlimit get", "setpriority", "setpriority high bits", "sched idle", "sched affinity", "ioprio",
		"migrate_pages", "move_pages", "get_robust_list", "pidfd_send_signal", "process_madvise"}
	allowed := []string{"self prlimit", "self setpriority", "self sched"}
	check := func(what string, got map[string]string, victimPid int) {
		t.Helper()
		for _, name := range refused {
			if r := got[name]; !refusedErr(r) && r != "ENOSYS" {
				t.Errorf("%s: %s answered %q, want a refusal", what, name, r)
			}
		}
		for _, name := range allowed {
			if got[name] != "ok" {
				t.Errorf("%s: %s answered %q, want ok", what, name, got[name])
			}
		}
		if victimPid == victim.Process.Pid {
			if after := victimState(t, victimPid); after != before {
				t.Errorf("%s: the victim changed: %s, was %s", what, after, before)
			}
		}
	}
	off := newConfinedEnv(t, nil).withoutNamespaces()
	for _, profile := range []string{Default, Offline} {
		check(profile+" without namespaces", off.attack(t, profile, script), victim.Process.Pid)
	}
	e := newConfinedEnv(t, nil)
	if e.sb.caps.PidNS {
		initScript := strings.Replace(taskAttacks, "VICTIM", "1", 1)
		for _, profile := range []string{Default, Offline} {
			got := e.attack(t, profile, initScript)
			// The init is named by pid 1 in the call's namespace; it holds no
			// pipe to signal, so sigio is about the victim outside only.
			check(profile+", the call's init", got, 1)
		}
	}
	// Unconfined, the script changes a victim of its own.
	other := start()
	was := victimState(t, other.Process.Pid)
	got := off.attack(t, None, strings.Replace(taskAttacks, "VICTIM", strconv.Itoa(other.Process.Pid), 1))
	if got["prlimit set"] != "ok" || got["setpriority"] != "ok" {
		t.Errorf("unconfined: prlimit %q, setpriority %q: the script does not attack", got["prlimit set"], got["setpriority"])
	}
	testwait.For(t, "the unconfined SIGIO to end the victim", func() bool {
		return other.ProcessState != nil || syscall.Kill(other.Process.Pid, 0) != nil || isZombie(other.Process.Pid)
	})
	t.Logf("unconfined: the victim was %s", was)
}

// isZombie reports whether pid has ended and waits to be reaped.
func isZombie(pid int) bool {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))[0] == "Z"
}

// TestAttackOtherTasksAsUser is TestAttackOtherTasks for a daemon run by
// an ordinary user.
func TestAttackOtherTasksAsUser(t *testing.T) {
	t.Parallel()
	testuser.Rerun(t, "^TestAttackOtherTasks$")
}
