package sandbox

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
)

// libcPrelude calls libc's wrappers by name: lc(name, *args) raises
// OSError on -1, as sc does for raw numbers.
const libcPrelude = `
import platform
NR.update({"x86_64": {"userfaultfd": 323, "open_by_handle_at": 304},
    "aarch64": {"userfaultfd": 282, "open_by_handle_at": 265}}[platform.machine()])
def lc(name, *args):
    f = getattr(libc, name)
    f.restype = ctypes.c_int  # every one called returns an int
    r = f(*args)
    if r == -1:
        raise OSError(ctypes.get_errno(), name)
    return r
def read(p):
    with open(p, "rb") as f:
        f.read()
`

// refusedErr: an attack answered with a refusal of the kernel's
// (Landlock, seccomp, the PID namespace, a read-only mount).
func refusedErr(r string) bool {
	return r == "EACCES" || r == "EPERM" || r == "ESRCH" || r == "ENOENT" || r == "EROFS"
}

// initAttacks go for the call's init (PID 1 in its namespace) and for the
// files the launcher holds; a child of the script's own is the control: the
// same reads on it succeed, so a refusal on the init is the init's.
const initAttacks = libcPrelude + `
print("in namespace: " + ("yes" if os.getppid() == 0 else "no"))
if os.getppid() == 0:  # never the machine's PID 1
    for sig, name in ((9, "KILL"), (19, "STOP"), (15, "TERM"), (10, "USR1")):
        try_("init " + name, lambda: os.kill(1, sig))
    print("init state: " + open("/proc/1/stat").read().rsplit(")", 1)[1].split()[0])
    try_("init ptrace", lambda: sc("ptrace", 16, 1, 0, 0))
    buf = ctypes.create_string_buffer(8)
    local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
    try_("init process_vm_readv", lambda: sc("process_vm_readv", 1, ctypes.addressof(local), 1, ctypes.addressof(local), 1, 0))
    try_("init mem", lambda: read("/proc/1/mem"))
    try_("init environ", lambda: read("/proc/1/environ"))
    try_("init maps", lambda: read("/proc/1/maps"))
    try_("init root", lambda: os.readlink("/proc/1/root"))
    try_("init cwd", lambda: os.readlink("/proc/1/cwd"))
    try_("init fd 0", lambda: os.readlink("/proc/1/fd/0"))
    try_("init ns", lambda: os.close(os.open("/proc/1/ns/mnt", os.O_RDONLY)))
pid = os.fork()
if pid == 0:
    import time
    time.sleep(30)
    os._exit(0)
try_("child environ", lambda: read("/proc/%d/environ" % pid))
try_("child maps", lambda: read("/proc/%d/maps" % pid))
try_("child fd 0", lambda: os.readlink("/proc/%d/fd/0" % pid))
try_("child cwd", lambda: os.readlink("/proc/%d/cwd" % pid))
try_("child signal", lambda: os.kill(pid, 0))
os.kill(pid, 9)
os.waitpid(pid, 0)
def setns_own():
    fd = os.open("/proc/self/ns/pid", os.O_RDONLY)
    try:
        sc("setns", fd, 0)
    finally:
        os.close(fd)
try_("setns own", setns_own)
print("fds: " + (" ".join(str(f) for f in range(3, 1024) if os.path.exists("/proc/self/fd/%d" % f)) or "none"))
`

// TestAttackInit: the call's init cannot be signalled, stopped, traced,
// read or entered from inside the call, and the command holds none of the
// launcher's files (its status pipe, its launch, its socket, the init's
// pipes), whether its launcher waited in the pool or was started for it.
func TestAttackInit(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	e.needNamespaces(t)
	cold := coldEnv(t, e)
	for _, profile := range []string{Default, Offline} {
		for _, env := range []struct {
			name string
			e    *confinedEnv
		}{{"pooled", e}, {"cold", cold}} {
			if env.name == "pooled" {
				env.e.prime(t)
			}
			got := env.e.attack(t, profile, initAttacks)
			what := profile + " (" + env.name + ")"
			if got["in namespace"] != "yes" {
				t.Fatalf("%s: the command is not in a PID namespace of its own: %v", what, got)
			}
			for _, name := range []string{"init KILL", "init STOP", "init TERM", "init USR1", "init ptrace",
				"init process_vm_readv", "init mem", "init environ", "init maps", "init root", "init cwd", "init fd 0", "init ns", "setns own"} {
				if !refusedErr(got[name]) {
					t.Errorf("%s: %s answered %q, want a refusal", what, name, got[name])
				}
			}
			if got["init state"] != "S" {
				t.Errorf("%s: the init's state after the signals is %q, want S (sleeping)", what, got["init state"])
			}
			// The same reads on an ordinary process of the call: the script attacks.
			for _, name := range []string{"child environ", "child maps", "child fd 0", "child cwd", "child signal"} {
				if got[name] != "ok" {
					t.Errorf("%s: %s answered %q: the script does not attack", what, name, got[name])
				}
			}
			if got["fds"] != "none" {
				t.Errorf("%s: the command holds fds %s beyond its stdio", what, got["fds"])
			}
		}
	}
}

// procAttacks write the kernel's settings through /proc (a root daemon's
// command runs as uid 0, whom their modes let write), its own user
// namespace's maps, and make namespaces the filter refuses.
const procAttacks = libcPrelude + `
for p in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/proc/sys/kernel/hostname", "/proc/sysrq-trigger"):
    if os.path.exists(p):
        try_("write " + p, lambda: os.close(os.open(p, os.O_WRONLY)))
def uid_map():
    fd = os.open("/proc/self/uid_map", os.O_WRONLY)
    try:
        os.write(fd, b"0 0 1\n")
    finally:
        os.close(fd)
try_("uid_map", uid_map)
try_("setgroups", lambda: os.setgroups([]))
try_("sethostname", lambda: lc("sethostname", b"x", 1))
try_("time namespace", lambda: sc("unshare", 0x80))
try_("userfaultfd device", lambda: os.close(os.open("/dev/userfaultfd", os.O_RDWR)))
try_("userfaultfd", lambda: sc("userfaultfd", 0))
h = ctypes.create_string_buffer(b"\x80" + b"\x00" * 135)
mnt = ctypes.c_int()
try_("name_to_handle_at", lambda: lc("name_to_handle_at", -100, b"/etc/hostname", h, ctypes.byref(mnt), 0))
try_("open_by_handle_at", lambda: sc("open_by_handle_at", os.open("/", os.O_RDONLY), ctypes.addressof(h), 0))
`

// TestAttackProcAndNamespaces: the call's /proc lets no kernel setting be
// written (core_pattern would run a program as root at the next crash),
// its user namespace's maps and groups stay, no time namespace, no
// userfaultfd by the device, no file opened by a handle. Unconfined, a
// root daemon's command could do the first.
func TestAttackProcAndNamespaces(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	for _, profile := range []string{Default, Offline} {
		got := e.attack(t, profile, procAttacks)
		for name, r := range got {
			if strings.HasPrefix(name, "write ") && !refusedErr(r) {
				t.Errorf("%s: %s answered %q, want a refusal", profile, name, r)
			}
		}
		for _, name := range []string{"uid_map", "setgroups", "sethostname", "time namespace", "userfaultfd device", "userfaultfd", "open_by_handle_at"} {
			if !refusedErr(got[name]) {
				t.Errorf("%s: %s answered %q, want a refusal", profile, name, got[name])
			}
		}
		// A handle alone opens nothing: open_by_handle_at is refused.
		if got["name_to_handle_at"] != "ok" && got["name_to_handle_at"] != "EOPNOTSUPP" {
			t.Logf("%s: name_to_handle_at answered %q", profile, got["name_to_handle_at"])
		}
	}
	if os.Geteuid() == 0 {
		got := e.attack(t, None, procAttacks)
		if got["write /proc/sys/kernel/core_pattern"] != "ok" || got["setgroups"] != "ok" || got["time namespace"] != "ok" {
			t.Errorf("unconfined root: core_pattern %q, setgroups %q, time namespace %q: the script does not attack",
				got["write /proc/sys/kernel/core_pattern"], got["setgroups"], got["time namespace"])
		}
	}
}

// ipcKey is a System V IPC key and POSIX queue name of this test run's own.
func ipcKey() (int, string) {
	k := 0x5c000000 | os.Getpid()&0xffffff
	return k, "/vcpnode-test-" + strconv.Itoa(k)
}

// ipcLeave leaves System V shared memory, a message queue and a
// semaphore set behind, and tries a POSIX message queue (Landlock refuses
// making a file in the queues' file system); ipcFind looks for them
// (ENOENT: gone); ipcRemove removes them.
const (
	ipcLeave = libcPrelude + `
try_("shm", lambda: lc("shmget", KEY, 4096, 0o1600))
try_("msg", lambda: lc("msgget", KEY, 0o1600))
try_("sem", lambda: lc("semget", KEY, 1, 0o1600))
try_("mq", lambda: os.close(lc("mq_open", NAME, os.O_CREAT | os.O_RDWR, 0o600, None)))
`
	ipcFind = libcPrelude + `
try_("shm", lambda: lc("shmget", KEY, 0, 0))
try_("msg", lambda: lc("msgget", KEY, 0))
try_("sem", lambda: lc("semget", KEY, 0, 0))
try_("mq", lambda: os.close(lc("mq_open", NAME, os.O_RDWR)))
`
	ipcRemove = libcPrelude + `
for get, ctl, args in (("shmget", "shmctl", (0, 0)), ("msgget", "msgctl", (0,)), ("semget", "semctl", (0, 0))):
    try:
        i = lc(get, KEY, *args)
        lc(ctl, i, *((0, 0, None) if ctl == "semctl" else (0, None)))
    except OSError:
        pass
try:
    lc("mq_unlink", NAME)
except OSError:
    pass
`
)

// TestAttackIPCIsPrivate: System V shared memory, message queues and
// semaphores a call makes (none has a path Landlock could refuse) are gone
// when it ends and never seen by another call: each call has an IPC
// namespace of its own. Without the namespaces they outlive the call.
// POSIX message queues are refused (their file system is not granted).
func TestAttackIPCIsPrivate(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	key, name := ipcKey()
	with := func(script string) string {
		return "KEY = " + strconv.Itoa(key) + "\nNAME = b\"" + name + "\"\n" + script
	}
	t.Cleanup(func() { e.attack(t, None, with(ipcRemove)) })
	objects := []string{"shm", "msg", "sem"}
	if got := e.attack(t, Default, with(ipcLeave)); !allAre(got, objects, "ok") || !refusedErr(got["mq"]) {
		t.Fatalf("making IPC objects in a call: %v", got)
	}
	e.needNamespaces(t)
	for _, profile := range []string{Default, None} { // another call, and the machine
		if got := e.attack(t, profile, with(ipcFind)); !allAre(got, append(objects, "mq"), "ENOENT") {
			t.Errorf("after the call, %s sees its IPC objects: %v", profile, got)
		}
	}
	// Without the namespaces, they stay: the test would see a leak.
	off := newConfinedEnv(t, nil).withoutNamespaces()
	off.attack(t, Default, with(ipcLeave))
	if got := off.attack(t, Default, with(ipcFind)); !allAre(got, objects, "ok") {
		t.Errorf("without namespaces: %v: the script does not attack", got)
	}
}

func allAre(got map[string]string, names []string, want string) bool {
	for _, n := range names {
		if got[n] != want {
			return false
		}
	}
	return true
}

// familyAttacks open sockets of the families no tool needs: each is a
// way out (vsock to a virtual machine's host) or kernel code a process
// reaches by asking (a module loads for the family).
const familyAttacks = `
for fam, typ, proto, name in ((16, 3, 0, "netlink route"), (16, 3, 4, "netlink sock_diag"), (16, 3, 15, "netlink uevent"),
        (16, 3, 9, "netlink audit"), (16, 3, 16, "netlink generic"), (16, 3, (1 << 32) | 4, "netlink, high bits"),
        (40, 1, 0, "vsock"), (38, 5, 0, "alg"), (31, 1, 3, "bluetooth"), (30, 2, 0, "tipc"), (21, 5, 0, "rds"),
        (44, 3, 0, "xdp"), (29, 3, 1, "can"), (15, 3, 2, "key"), (5, 2, 0, "appletalk"), (9, 5, 0, "x25")):
    try_(name, lambda: os.close(sc("socket", fam, typ, proto)))
`

// TestAttackSocketFamilies: under every confining profile a tool opens
// Unix, internet and routing netlink sockets only, as the network allows;
// vsock, AF_ALG, Bluetooth and the rest are refused before the kernel
// looks for them (a refused family loads no module). Unconfined, the
// families this kernel has open.
func TestAttackSocketFamilies(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, map[string]Spec{"web": {Extends: Default, ConnectPorts: []int{443}}})
	open := e.attack(t, None, familyAttacks)
	for _, profile := range []string{Default, "web", Offline} {
		got := e.attack(t, profile, familyAttacks)
		for name, r := range got {
			want := "EPERM"
			if name == "netlink route" && profile != Offline {
				want = "ok"
			}
			if r != want {
				t.Errorf("%s: %s answered %q, want %s (unconfined: %s)", profile, name, r, want, open[name])
			}
		}
	}
	if open["netlink sock_diag"] != "ok" || open["netlink route"] != "ok" {
		t.Errorf("unconfined: netlink route %q, sock_diag %q: the script does not attack", open["netlink route"], open["netlink sock_diag"])
	}
	t.Logf("unconfined here: %v", open)
}

// TestAttackTCPAroundLandlock: where the profile leaves TCP to Landlock's
// port rules, the ways around them are closed: a TCP Fast Open sendto
// (which connects without connect) and, under offline, a listen without
// bind (which binds a port without bind). Under default both work.
func TestAttackTCPAroundLandlock(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	e := newConfinedEnv(t, map[string]Spec{"web": {Extends: Default, ConnectPorts: []int{443}}})
	script := `
def fastopen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.sendto(b"x", 0x20000000, ("127.0.0.1", ` + strconv.Itoa(port) + `))
try_("fastopen", fastopen)
def fastopen_msg():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.sendmsg([b"x"], [], 0x20000000, ("127.0.0.1", ` + strconv.Itoa(port) + `))
try_("fastopen sendmsg", fastopen_msg)
try_("connect", lambda: socket.create_connection(("127.0.0.1", ` + strconv.Itoa(port) + `)).close())
def autobind():
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.listen()
    s.close()
try_("listen unbound", autobind)
`
	for profile, want := range map[string]map[string]string{
		Offline: {"fastopen": "EPERM", "fastopen sendmsg": "EPERM", "connect": "EPERM", "listen unbound": "EPERM"},
		"web":   {"fastopen": "EPERM", "fastopen sendmsg": "EPERM", "connect": "EACCES", "listen unbound": "ok"},
		Default: {"fastopen": "ok", "fastopen sendmsg": "ok", "connect": "ok", "listen unbound": "ok"},
	} {
		got := e.attack(t, profile, script)
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s: %s answered %q, want %s", profile, name, got[name], w)
			}
		}
	}
}

// TestAttackConnectPortsIPv6: connect_ports holds for IPv6 and IPv4-mapped
// addresses as for IPv4, and refuses UDP to a listed port.
func TestAttackConnectPortsIPv6(t *testing.T) {
	t.Parallel()
	listen := func(network, addr string) int {
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Skipf("no %s loopback here: %v", network, err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln.Addr().(*net.TCPAddr).Port
	}
	allowed, other := listen("tcp6", "[::1]:0"), listen("tcp6", "[::1]:0")
	other4 := listen("tcp4", "127.0.0.1:0")
	e := newConfinedEnv(t, map[string]Spec{"web": {Extends: Default, ConnectPorts: []int{allowed}}})
	script := `
def conn(addr, port):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.connect((addr, port))
    s.close()
try_("allowed", lambda: conn("::1", ` + strconv.Itoa(allowed) + `))
try_("other", lambda: conn("::1", ` + strconv.Itoa(other) + `))
try_("v4-mapped", lambda: conn("::ffff:127.0.0.1", ` + strconv.Itoa(other4) + `))
try_("udp6 to the port", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b"x", ("::1", ` + strconv.Itoa(allowed) + `)))
`
	want := map[string]string{"allowed": "ok", "other": "EACCES", "v4-mapped": "EACCES", "udp6 to the port": "EPERM"}
	got := e.attack(t, "web", script)
	for name, w := range want {
		if got[name] != w {
			t.Errorf("web: %s answered %q, want %s", name, got[name], w)
		}
	}
	if got := e.attack(t, Default, script); got["other"] != "ok" || got["v4-mapped"] != "ok" {
		t.Errorf("default: other %q, v4-mapped %q: the script does not attack", got["other"], got["v4-mapped"])
	}
}

// execAttacks run code the tool wrote into memory, and ask the kernel for
// another execution domain.
const execAttacks = libcPrelude + `
import subprocess
def memfd():
    fd = os.memfd_create("x", 0)
    with open("/bin/grep", "rb") as f:
        os.write(fd, f.read())
    out = subprocess.run(["grep", "-E", "^(NoNewPrivs|Seccomp|CapEff):", "/proc/self/status"],
        executable="/proc/self/fd/%d" % fd, pass_fds=(fd,), capture_output=True)
    print("memfd status: " + out.stdout.decode().replace("\n", " ").replace("\t", "").strip())
    if out.returncode != 0:
        raise OSError(errno.EACCES, out.stderr)
try_("memfd exec", memfd)
`

// TestAttackMemfdExec: a program a tool writes into a memfd and runs is
// confined as the tool is (Landlock lets internal files be run; the
// confinement is the process's, not the file's).
func TestAttackMemfdExec(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	for _, profile := range []string{Default, Offline} {
		got := e.attack(t, profile, execAttacks)
		if got["memfd exec"] != "ok" || got["memfd status"] != "NoNewPrivs:1 Seccomp:2 CapEff:0000000000000000" &&
			got["memfd status"] != "CapEff:0000000000000000 NoNewPrivs:1 Seccomp:2" {
			t.Errorf("%s: memfd exec %q, status %q: want it run, confined", profile, got["memfd exec"], got["memfd status"])
		}
	}
}

// poolReads read what the launchers waiting in the pool (PIDS, as the
// daemon sees them) hold: their environment, and their socket (fd 3, a
// next call's launch) by its link and by pidfd_getfd; poolSignals signal,
// stop, kill and trace them.
const (
	poolReads = libcPrelude + `
NR.update({"pidfd_open": 434, "pidfd_getfd": 438})
for i, pid in enumerate(PIDS):
    try_("%d environ" % i, lambda: read("/proc/%d/environ" % pid))
    try_("%d fd" % i, lambda: os.readlink("/proc/%d/fd/3" % pid))
    def getfd():
        p = sc("pidfd_open", pid, 0)
        try:
            os.close(sc("pidfd_getfd", p, 3, 0))
        finally:
            os.close(p)
    try_("%d pidfd_getfd" % i, getfd)
`
	poolSignals = `
for i, pid in enumerate(PIDS):
    try_("%d signal" % i, lambda: os.kill(pid, 0))
    try_("%d stop" % i, lambda: os.kill(pid, 19))
    try_("%d kill" % i, lambda: os.kill(pid, 9))
    try_("%d ptrace" % i, lambda: sc("ptrace", 16, pid, 0, 0))
`
)

// TestAttackWaitingLaunchers: a call cannot reach the launchers waiting in
// the pool for the next calls — not their process, not their socket (a
// next call's launch) — in its PID namespace, where they do not exist,
// nor without it, where Landlock keeps a domain's signals and inspection
// inside it. The launchers still wait afterwards. Unconfined, root
// reaches their socket: the attack is real.
func TestAttackWaitingLaunchers(t *testing.T) {
	t.Parallel()
	base := newConfinedEnv(t, nil)
	if base.sb.Capabilities().LandlockABI < 6 {
		t.Skipf("Landlock ABI %d: signals are scoped from ABI 6", base.sb.Capabilities().LandlockABI)
	}
	for _, env := range []struct {
		name string
		e    *confinedEnv
	}{{"namespaces", base}, {"no namespaces", newConfinedEnv(t, nil).withoutNamespaces()}} {
		waiting := env.e.prime(t)
		// The first is the call's own launcher (without namespaces, the
		// command itself): the others wait for the next calls.
		var pids []string
		for _, pid := range waiting[1:] {
			pids = append(pids, strconv.Itoa(pid))
		}
		script := "PIDS = [" + strings.Join(pids, ", ") + "]\n" + poolReads
		if os.Geteuid() == 0 {
			if got := env.e.attack(t, None, script); got["0 fd"] != "ok" || got["0 pidfd_getfd"] != "ok" {
				t.Errorf("%s, unconfined: fd %q, pidfd_getfd %q: the script does not attack", env.name, got["0 fd"], got["0 pidfd_getfd"])
			}
		}
		got := env.e.attack(t, Default, script+poolSignals)
		for name, r := range got {
			if !refusedErr(r) {
				t.Errorf("%s: waiting launcher %s answered %q, want a refusal", env.name, name, r)
			}
		}
		// The call took the first; the others wait on, neither stopped nor killed.
		for _, pid := range waiting[1:] {
			if !slices.Contains(env.e.waitingPids(), pid) {
				t.Errorf("%s: launcher %d no longer waits", env.name, pid)
			}
			if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil ||
				strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))[0] != "S" {
				t.Errorf("%s: launcher %d: %q %v, want it sleeping", env.name, pid, st, err)
			}
		}
	}
}

// TestAttackUnixSocketByPath: a tool connects to a Unix socket outside
// its writable trees (here a listener of the test's; on a machine, the
// system bus, systemd's or a container runtime's socket, ssh-agent) only
// where Landlock cannot refuse it (below ABI 9), and sandbox check then
// says so; one in its own folder it always reaches.
func TestAttackUnixSocketByPath(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	listen := func(path string) {
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
	}
	outside, own := filepath.Join(t.TempDir(), "s"), filepath.Join(e.dir, "own.sock")
	listen(outside)
	listen(own)
	script := `
def conn(p):
    s = socket.socket(socket.AF_UNIX)
    s.connect(p)
    s.close()
try_("outside", lambda: conn("` + outside + `"))
try_("own", lambda: conn("` + own + `"))
`
	abi := e.sb.Capabilities().LandlockABI
	for _, profile := range []string{Default, Offline} {
		got := e.attack(t, profile, script)
		if got["own"] != "ok" {
			t.Errorf("%s: a socket in its own folder: %q, want ok", profile, got["own"])
		}
		if abi >= 9 {
			if got["outside"] != "EACCES" {
				t.Errorf("%s, Landlock ABI %d: a socket outside the grants: %q, want EACCES", profile, abi, got["outside"])
			}
			continue
		}
		if got["outside"] != "ok" {
			t.Errorf("%s, Landlock ABI %d: a socket outside the grants: %q: the script does not attack", profile, abi, got["outside"])
		}
		if p := protectionNamed(t, e.sb, profile, "no connect to Unix sockets by path"); p.State != StateNotEnforced || p.Detail == "" {
			t.Errorf("%s, Landlock ABI %d: sandbox check does not say a tool reaches Unix sockets by path", profile, abi)
		}
	}
}

// setuidAttacks make set-uid and set-gid files in the tool's own folder
// (the files are the tool's, uid 0 for a root daemon's): by chmod, at
// creation, by mknod, and a set-gid directory.
const setuidAttacks = libcPrelude + `
NR["openat2"] = 437
def mode(p):
    return " %o" % (os.stat(p).st_mode & 0o7777)
open("f", "w").close()
try_("chmod set-uid", lambda: os.chmod("f", 0o4755))
try_("chmod set-gid", lambda: os.chmod("f", 0o2755))
def fchmod():
    fd = os.open("f", os.O_RDONLY)
    try:
        os.fchmod(fd, 0o4755)
    finally:
        os.close(fd)
try_("fchmod set-uid", fchmod)
dfd = os.open(".", os.O_RDONLY)
try_("fchmodat set-uid", lambda: os.chmod("f", 0o4755, dir_fd=dfd))
try_("open set-uid", lambda: os.close(os.open("g", os.O_CREAT | os.O_WRONLY, 0o4755)))
try_("openat set-uid", lambda: os.close(os.open("g2", os.O_CREAT | os.O_WRONLY, 0o6755, dir_fd=dfd)))
try_("mknod set-uid", lambda: os.mknod("h", 0o104755))
try_("mkdir set-gid", lambda: os.mkdir("d", 0o2755))
def tmpfile():
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o4755)
    try:
        try:
            lc("linkat", fd, b"", -100, b"k", 0x1000)  # AT_FDCWD, AT_EMPTY_PATH
        except OSError as e:  # AT_EMPTY_PATH wants CAP_DAC_READ_SEARCH on older kernels
            if e.errno != errno.ENOENT:
                raise
            os.link("/proc/self/fd/%d" % fd, "k", follow_symlinks=True)
    finally:
        os.close(fd)
try_("tmpfile set-uid", tmpfile)
# A directory opened with mode bits in the register (libc passes 0; a raw
# syscall passes whatever it has): nothing is made.
NR["openat"] = {"x86_64": 257, "aarch64": 56}[platform.machine()]
dot = ctypes.create_string_buffer(b".")
try_("opendir with a stray mode", lambda: os.close(sc("openat", -100, ctypes.addressof(dot), os.O_RDONLY | os.O_DIRECTORY, 0o4755)))
how = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0)
name = ctypes.create_string_buffer(b"i")
try_("openat2", lambda: os.close(sc("openat2", -100, ctypes.addressof(name), ctypes.addressof(how), 24)))
try_("chmod plain", lambda: os.chmod("f", 0o755))
try_("open plain", lambda: os.close(os.open("j", os.O_CREAT | os.O_WRONLY, 0o644)))
print("modes:" + "".join(mode(p) for p in ("f", "g", "g2", "h", "d", "i", "k") if os.path.exists(p)))
for p in ("f", "g", "g2", "h", "i", "j", "k"):
    if os.path.exists(p):
        os.remove(p)
if os.path.exists("d"):
    os.rmdir("d")
`

// TestAttackSetuidFiles: a confined tool makes no set-uid or set-gid file
// (systemd's RestrictSUIDSGID=): what a root daemon's tool leaves in its
// folder would otherwise run as root for whoever starts it later, outside
// the sandbox. openat2, whose mode a filter cannot read, answers ENOSYS
// (programs fall back to openat). Plain modes are untouched. Unconfined,
// root makes them.
func TestAttackSetuidFiles(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	refused := []string{"chmod set-uid", "chmod set-gid", "fchmod set-uid", "fchmodat set-uid", "open set-uid",
		"openat set-uid", "mknod set-uid", "mkdir set-gid", "tmpfile set-uid"}
	for _, profile := range []string{Default, Offline} {
		got := e.attack(t, profile, setuidAttacks)
		for _, name := range refused {
			if got[name] != "EPERM" {
				t.Errorf("%s: %s answered %q, want EPERM", profile, name, got[name])
			}
		}
		if got["openat2"] != "ENOSYS" || got["chmod plain"] != "ok" || got["open plain"] != "ok" || got["opendir with a stray mode"] != "ok" {
			t.Errorf("%s: openat2 %q (want ENOSYS), chmod 755 %q, open 644 %q, O_DIRECTORY with mode bits %q (want ok)",
				profile, got["openat2"], got["chmod plain"], got["open plain"], got["opendir with a stray mode"])
		}
		for _, m := range strings.Fields(got["modes"]) {
			if v, err := strconv.ParseUint(m, 8, 32); err != nil || v&0o6000 != 0 {
				t.Errorf("%s: a file made with mode %s", profile, m)
			}
		}
	}
	if got := e.attack(t, None, setuidAttacks); got["chmod set-uid"] != "ok" || got["open set-uid"] != "ok" || got["tmpfile set-uid"] != "ok" || got["modes"] == "" {
		t.Errorf("unconfined: chmod %q, open %q, O_TMPFILE linked in %q, modes %q: the script does not attack",
			got["chmod set-uid"], got["open set-uid"], got["tmpfile set-uid"], got["modes"])
	} else {
		t.Logf("unconfined: modes%s", got["modes"])
	}
}

// TestAttackSharedPlaces: a confined tool writes nothing in the places
// every process shares (/tmp, /var/tmp, /run/lock), and what it writes in
// its private TMPDIR is gone when the call ends. Unconfined, the same
// writes land.
func TestAttackSharedPlaces(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	name := "vcpnode-test-" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(e.dir)
	places := []string{"/tmp", "/var/tmp", "/run/lock"}
	for _, d := range places {
		t.Cleanup(func() { os.Remove(filepath.Join(d, name)) })
	}
	script := `
for d in ("/tmp", "/var/tmp", "/run/lock"):
    if os.path.isdir(d) and os.access(d, os.W_OK):
        try_("write " + d, lambda: open(d + "/` + name + `", "w").close())
if os.environ.get("TMPDIR", "/tmp") != "/tmp":  # the call's own
    with open(os.environ["TMPDIR"] + "/left", "w") as f:
        f.write("x")
    print("tmpdir: " + os.environ["TMPDIR"])
`
	// With the namespaces the TMPDIR is in the call's /dev/shm, without
	// them a directory on the machine's disk.
	for _, ns := range []bool{true, false} {
		e := e
		if !ns {
			e = newConfinedEnv(t, nil).withoutNamespaces()
		}
		for _, profile := range []string{Default, Offline} {
			got := e.attack(t, profile, script)
			for k, r := range got {
				if strings.HasPrefix(k, "write ") && !refusedErr(r) {
					t.Errorf("%s: %s answered %q, want a refusal", profile, k, r)
				}
			}
			t.Logf("%s, namespaces %t: TMPDIR %s", profile, ns, got["tmpdir"])
			if dir := got["tmpdir"]; dir == "" || dir == os.TempDir() {
				t.Errorf("%s: TMPDIR %q, want the call's own", profile, dir)
			} else if _, err := os.Stat(filepath.Join(dir, "left")); !os.IsNotExist(err) {
				t.Errorf("%s: a file of the call's TMPDIR %s outlived it: %v", profile, dir, err)
			}
		}
	}
	if got := e.attack(t, None, script); got["write /tmp"] != "ok" {
		t.Errorf("unconfined: write /tmp %q: the script does not attack", got["write /tmp"])
	}
}

// TestAttackHiddenSockets: in the call's mount namespace the trees where
// the machine keeps its services' sockets (/run; here a tree of the
// test's) are empty but for the call's grants, mounted back as they are:
// a socket there is not found, below Landlock ABI 9 as above; one under a
// grant still answers. Without the namespaces the same socket answers.
func TestAttackHiddenSockets(t *testing.T) {
	t.Parallel()
	run := filepath.Join(t.TempDir(), "run")
	for _, d := range []string{"systemd", "keep/inner"} {
		if err := os.MkdirAll(filepath.Join(run, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(run, "keep", "inner", "f"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"systemd/private", "keep/s"} {
		ln, err := net.Listen("unix", filepath.Join(run, s))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
	}
	env := func() *confinedEnv {
		e := newConfinedEnv(t, map[string]Spec{"kept": {Extends: Default, Read: []string{filepath.Join(run, "keep")}}})
		o := *e.sb.opts.Load()
		o.hide = []string{run}
		e.sb.opts.Store(&o)
		return e
	}
	script := `
def conn(p):
    s = socket.socket(socket.AF_UNIX)
    s.connect(p)
    s.close()
try_("service socket", lambda: conn("` + run + `/systemd/private"))
try_("granted socket", lambda: conn("` + run + `/keep/s"))
try_("granted file", lambda: read("` + run + `/keep/inner/f"))
`
	e := env()
	e.needNamespaces(t)
	for _, profile := range []string{"kept", Offline} {
		got := e.attack(t, profile, libcPrelude+script)
		if got["service socket"] != "ENOENT" {
			t.Errorf("%s: the service's socket answered %q, want ENOENT (hidden)", profile, got["service socket"])
		}
		if profile == "kept" && (got["granted socket"] != "ok" || got["granted file"] != "ok") {
			t.Errorf("%s: under its grant, socket %q, file %q: want both ok", profile, got["granted socket"], got["granted file"])
		}
	}
	off := env().withoutNamespaces()
	if got := off.attack(t, "kept", libcPrelude+script); got["service socket"] != "ok" {
		t.Errorf("without namespaces: the service's socket answered %q: the script does not attack", got["service socket"])
	}
}

// TestAttacksNewAsOrdinaryUser runs the attacks of this file again in a
// copy of the test binary started as nobody.
func TestAttacksNewAsOrdinaryUser(t *testing.T) {
	t.Parallel()
	testuser.Rerun(t, "^(TestAttackInit|TestAttackProcAndNamespaces|TestAttackIPCIsPrivate|TestAttackSocketFamilies|TestAttackTCPAroundLandlock|TestAttackConnectPortsIPv6|TestAttackMemfdExec|TestAttackWaitingLaunchers|TestAttackUnixSocketByPath|TestAttackSetuidFiles|TestAttackSharedPlaces|TestAttackHiddenSockets)$")
}
