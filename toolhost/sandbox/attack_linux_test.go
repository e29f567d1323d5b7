package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/internal/testwait"
	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// attackPrelude is what every attack script starts with: try(name, fn)
// prints "name: ok" or "name: ERRNO" (the errno's symbol).
const attackPrelude = `
import ctypes, errno, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = %s
def sc(name, *args):
    r = libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_long(a) for a in args])
    if r < 0:
        raise OSError(ctypes.get_errno(), name)
    return r
def try_(name, fn):
    try:
        fn()
        print(name + ": ok")
    except OSError as e:
        print(name + ": " + errno.errorcode.get(e.errno, str(e.errno)))
    sys.stdout.flush()
`

// syscallNumbers are the numbers the attacks call by, per architecture.
var syscallNumbers = map[string]string{
	"amd64": `{"reboot": 169, "socket": 41, "clone3": 435, "keyctl": 250, "bpf": 321,
		"perf_event_open": 298, "io_uring_setup": 425, "finit_module": 313, "unshare": 272,
		"mount": 165, "ptrace": 101, "process_vm_readv": 310, "ioctl": 16, "setns": 308}`,
	"arm64": `{"reboot": 142, "socket": 198, "clone3": 435, "keyctl": 219, "bpf": 280,
		"perf_event_open": 241, "io_uring_setup": 425, "finit_module": 273, "unshare": 97,
		"mount": 40, "ptrace": 117, "process_vm_readv": 270, "ioctl": 29, "setns": 268}`,
}

// python is the system's Python 3 (not a shim under the user's home, which
// no profile grants); the attacks are written in it for ctypes.
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no system python3 (/usr/bin/python3): the attack scripts are written in it")
	return ""
}

// attack runs script (after the prelude) under profile and returns what
// each try printed, by name.
func (e *confinedEnv) attack(t *testing.T, profile, script string) map[string]string {
	t.Helper()
	nrs, ok := syscallNumbers[runtime.GOARCH]
	if !ok {
		t.Skipf("no syscall numbers for %s in the attack scripts", runtime.GOARCH)
	}
	src := strings.Replace(attackPrelude, "%s", nrs, 1) + script
	out, stderr, code := e.run(t, profile, python(t), "-c", src)
	if code != 0 {
		t.Fatalf("attack script under %s: exit %d\n%s%s", profile, code, out, stderr)
	}
	return attackAnswers(out)
}

// attackAnswers reads what an attack script printed: each try's name and answer.
func attackAnswers(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if name, res, ok := strings.Cut(line, ": "); ok {
			got[name] = res
		}
	}
	return got
}

// privilegeAttacks are what a hostile tool tries with root's capabilities
// or a kernel interface no tool needs; each is refused under every
// confining profile.
const privilegeAttacks = `
st = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines() if l.startswith("Cap"))
for k in ("CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd"):
    print(k + ": " + ("none" if int(st[k], 16) == 0 else st[k]))
# A wrong magic: EINVAL with CAP_SYS_BOOT (and nothing happens), EPERM without.
try_("reboot", lambda: sc("reboot", 0, 0, 0, 0))
try_("packet socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close())
try_("raw socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close())
# The same with garbage in the high half of the int argument.
try_("packet socket, high bits", lambda: os.close(sc("socket", (1 << 32) | socket.AF_PACKET, socket.SOCK_RAW, 0)))
try_("user namespace", lambda: sc("unshare", 0x10000000))
try_("clone3", lambda: sc("clone3", 0, 0))
try_("setns", lambda: sc("setns", 0, 0))
try_("mount", lambda: sc("mount", 0, 0, 0, 0, 0))
try_("keyctl", lambda: sc("keyctl", 0, 0, 0, 0, 0))
try_("bpf", lambda: sc("bpf", 0, 0, 0))
try_("perf_event_open", lambda: sc("perf_event_open", 0, 0, -1, -1, 0))
try_("io_uring", lambda: sc("io_uring_setup", 1, 0))
try_("module", lambda: sc("finit_module", -1, 0, 0))
pid = os.fork()
if pid == 0:
    import time
    time.sleep(30)
    os._exit(0)
try_("ptrace", lambda: sc("ptrace", 16, pid, 0, 0))  # PTRACE_ATTACH
buf = ctypes.create_string_buffer(8)
local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 8)
try_("process_vm_readv", lambda: sc("process_vm_readv", pid, ctypes.addressof(local), 1, ctypes.addressof(local), 1, 0))
os.kill(pid, 9)
os.waitpid(pid, 0)
`

// TestAttackPrivilegeIsRefused: capabilities, namespaces, mount, ptrace,
// the keyring, BPF, perf, modules, io_uring, raw and packet sockets and
// clone3 are out of a confined tool's reach, as root and as a user; the
// same script unconfined shows the attacks are real where this machine
// allows them (as root: reboot answers EINVAL, packet sockets open).
func TestAttackPrivilegeIsRefused(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	root := os.Geteuid() == 0
	for _, profile := range []string{Default, Offline} {
		got := e.attack(t, profile, privilegeAttacks)
		for _, k := range []string{"CapEff", "CapPrm", "CapInh", "CapAmb"} {
			if got[k] != "none" {
				t.Errorf("%s: %s = %q, want none", profile, k, got[k])
			}
		}
		// An ordinary user's call empties it inside its user namespace.
		if (root || e.sb.caps.UserNS) && got["CapBnd"] != "none" {
			t.Errorf("%s: CapBnd = %q, want none", profile, got["CapBnd"])
		}
		want := map[string]string{"reboot": "EPERM", "packet socket": "EPERM", "raw socket": "EPERM",
			"packet socket, high bits": "EPERM", "user namespace": "EPERM", "clone3": "ENOSYS",
			"setns": "EPERM", "mount": "EPERM", "keyctl": "EPERM", "bpf": "EPERM",
			"perf_event_open": "EPERM", "io_uring": "EPERM", "module": "EPERM", "ptrace": "EPERM",
			"process_vm_readv": "EPERM"}
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s: %s answered %q, want %s", profile, name, got[name], w)
			}
		}
	}
	// Unconfined, the same attacks get through where the machine allows.
	got := e.attack(t, None, privilegeAttacks)
	if got["clone3"] == "ENOSYS" || got["ptrace"] != "ok" {
		t.Errorf("unconfined: clone3 %q, ptrace %q: the script does not attack", got["clone3"], got["ptrace"])
	}
	if root && (got["reboot"] != "EINVAL" || got["packet socket"] != "ok" || got["packet socket, high bits"] != "ok") {
		t.Errorf("unconfined root: reboot %q, packet socket %q / %q: the script does not attack",
			got["reboot"], got["packet socket"], got["packet socket, high bits"])
	}
}

// networkAttacks open the sockets the network rules are about.
const networkAttacks = `
try_("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close())
try_("udp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close())
try_("udp, high bits", lambda: os.close(sc("socket", (1 << 32) | socket.AF_INET, socket.SOCK_DGRAM, 0)))
try_("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
try_("sctp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132).close())
try_("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close())
try_("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
try_("unix pair", lambda: [s.close() for s in socket.socketpair()])
`

// TestAttackNetworkFamilies: offline leaves Unix sockets only (no TCP,
// UDP or netlink); connect_ports leaves plain TCP streams (no UDP, no
// SCTP), whose ports Landlock checks; default leaves them all.
func TestAttackNetworkFamilies(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, map[string]Spec{"web": {Extends: Default, ConnectPorts: []int{443}}})
	cases := map[string]map[string]string{
		Offline: {"udp": "EPERM", "udp6": "EPERM", "udp, high bits": "EPERM", "tcp": "EPERM", "sctp": "EPERM",
			"netlink": "EPERM", "unix": "ok", "unix pair": "ok"},
		"web": {"udp": "EPERM", "udp6": "EPERM", "udp, high bits": "EPERM", "tcp": "ok", "sctp": "EPERM",
			"netlink": "ok", "unix": "ok", "unix pair": "ok"},
		Default: {"udp": "ok", "udp6": "ok", "tcp": "ok", "netlink": "ok", "unix": "ok", "unix pair": "ok"},
	}
	if out, _, _ := e.sh(t, "web", `echo "$RES_OPTIONS"`); out != "use-vc\n" {
		t.Errorf("under connect_ports RES_OPTIONS = %q, want use-vc (names resolved over TCP)", out)
	}
	for profile, want := range cases {
		got := e.attack(t, profile, networkAttacks)
		for name, w := range want {
			if got[name] != w && !(w == "ok" && got[name] == "EAFNOSUPPORT") {
				t.Errorf("%s: %s answered %q, want %s", profile, name, got[name], w)
			}
		}
	}
}

// TestAttackTIOCSTI: a confined tool handed a terminal as its stdin cannot
// type into it (TIOCSTI) nor make console requests (TIOCLINUX), whatever
// it puts in the high half of the request; unconfined, root can.
func TestAttackTIOCSTI(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer slave.Close()
	e.stdin = slave
	script := `
c = ctypes.c_char(b"x")
try_("TIOCSTI", lambda: sc("ioctl", 0, 0x5412, ctypes.addressof(c)))
try_("TIOCSTI, high bits", lambda: sc("ioctl", 0, (1 << 32) | 0x5412, ctypes.addressof(c)))
try_("TIOCLINUX", lambda: sc("ioctl", 0, 0x541C, ctypes.addressof(c)))
`
	for _, profile := range []string{Default, Offline} {
		got := e.attack(t, profile, script)
		for _, name := range []string{"TIOCSTI", "TIOCSTI, high bits", "TIOCLINUX"} {
			if got[name] != "EPERM" {
				t.Errorf("%s: %s answered %q, want EPERM", profile, name, got[name])
			}
		}
	}
	if os.Geteuid() == 0 {
		if got := e.attack(t, None, script); got["TIOCSTI"] != "ok" || got["TIOCSTI, high bits"] != "ok" {
			t.Errorf("unconfined root: TIOCSTI %q / %q: the script does not attack", got["TIOCSTI"], got["TIOCSTI, high bits"])
		}
	}
}

// userAttackTests run again as an ordinary user by TestAttacksAsOrdinaryUser.
const userAttackTests = "^(TestLaunchConfinesTheCommand|TestAttackPrivilegeIsRefused|TestAttackNetworkFamilies|TestAttackTIOCSTI|TestAttackDevices|TestAttackSharedMemoryIsPrivate|TestAttackOtherToolsProc|TestAttackLeftoverDiesWithTheCall|TestLaunchEndsAsTheCommand|TestProbeSeesTheNamespaces|TestAttackCgroupEscape)$"

// TestAttacksAsOrdinaryUser runs the attack tests again in a copy of this
// test binary started as nobody (uid 65534): a daemon run by an ordinary
// user must hold the same. Run as a user already, those tests are this run.
func TestAttacksAsOrdinaryUser(t *testing.T) {
	t.Parallel()
	testuser.Rerun(t, userAttackTests)
}

// deviceAttacks make device nodes in the tool's own folder and open the
// devices a tool has no business with.
const deviceAttacks = `
try_("mknod char", lambda: os.mknod("memdev", 0o600 | 0o020000, os.makedev(1, 1)))
try_("mknod block", lambda: os.mknod("loopdev", 0o600 | 0o060000, os.makedev(7, 0)))
try_("mkfifo", lambda: os.mkfifo("fifo"))
def sock():
    s = socket.socket(socket.AF_UNIX)
    s.bind("sock")
    s.close()
try_("unix socket", sock)
try_("open /dev/tty", lambda: os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)))
try_("open /dev/ptmx", lambda: os.close(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)))
try_("open /dev/pts/0", lambda: os.close(os.open("/dev/pts/0", os.O_RDWR | os.O_NOCTTY)))
try_("open /dev/kmsg", lambda: os.close(os.open("/dev/kmsg", os.O_RDONLY)))
try_("open /dev/null", lambda: os.close(os.open("/dev/null", os.O_RDWR)))
try_("open /dev/urandom", lambda: os.close(os.open("/dev/urandom", os.O_RDONLY)))
`

// TestAttackDevices: no device node is made in a writable folder (FIFOs
// and Unix sockets are), no terminal or kernel device is opened; the
// devices every program expects still are.
func TestAttackDevices(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	refused := func(r string) bool { return r == "EACCES" || r == "EPERM" }
	for _, profile := range []string{Default, Offline} {
		got := e.attack(t, profile, deviceAttacks)
		for _, name := range []string{"mknod char", "mknod block", "open /dev/tty", "open /dev/ptmx", "open /dev/pts/0", "open /dev/kmsg"} {
			if !refused(got[name]) && got[name] != "ENXIO" && got[name] != "ENOENT" {
				t.Errorf("%s: %s answered %q, want a refusal", profile, name, got[name])
			}
		}
		for _, name := range []string{"mkfifo", "unix socket", "open /dev/null", "open /dev/urandom"} {
			if got[name] != "ok" {
				t.Errorf("%s: %s answered %q, want ok", profile, name, got[name])
			}
		}
		for _, f := range []string{"memdev", "loopdev", "fifo", "sock"} {
			os.Remove(filepath.Join(e.dir, f))
		}
	}
	if os.Geteuid() == 0 {
		got := e.attack(t, None, deviceAttacks)
		if got["mknod char"] != "ok" || got["open /dev/ptmx"] != "ok" {
			t.Errorf("unconfined root: mknod %q, ptmx %q: the script does not attack", got["mknod char"], got["open /dev/ptmx"])
		}
	}
}

// TestAttackSharedMemoryIsPrivate: what a call leaves in /dev/shm is gone
// when it ends (each call has a tmpfs of its own there), and Python's
// multiprocessing (semaphores in /dev/shm) still works. With the
// namespaces switched off the same file stays behind: the leak is real.
func TestAttackSharedMemoryIsPrivate(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	py := python(t)
	out, stderr, code := e.run(t, Default, py, "-c", `
import multiprocessing as m
def sq(x): return x * x
if __name__ == "__main__":
    with m.get_context("fork").Pool(2) as p:
        print(p.map(sq, [1, 2, 3]))
    l = m.Lock()
    l.acquire()
    print("lock ok")
`)
	if code != 0 || out != "[1, 4, 9]\nlock ok\n" {
		t.Errorf("multiprocessing under default: exit %d, %q %s", code, out, stderr)
	}
	e.needNamespaces(t)
	name := "vcpnode-test-" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(e.dir)
	for _, shared := range []string{filepath.Join("/dev/shm", name)} {
		t.Cleanup(func() { os.Remove(shared) })
		if out, stderr, code := e.sh(t, Default, "echo left > "+shared+" && cat "+shared); code != 0 || out != "left\n" {
			t.Fatalf("write in %s: exit %d %q %s", shared, code, out, stderr)
		}
		if _, err := os.Stat(shared); !os.IsNotExist(err) {
			t.Errorf("the call's %s outlived it: %v", shared, err)
		}
	}
	// Without the namespaces, they stay: the test would see a leak.
	off := newConfinedEnv(t, nil).withoutNamespaces()
	for _, shared := range []string{filepath.Join("/dev/shm", name)} {
		if _, stderr, code := off.sh(t, Default, "echo left > "+shared); code != 0 {
			t.Fatalf("write in %s without namespaces: %s", shared, stderr)
		}
		if _, err := os.Stat(shared); err != nil {
			t.Errorf("without namespaces: %v: the script does not attack", err)
		}
	}
}

// TestAttackLeftoverDiesWithTheCall: a process a call leaves behind after
// a setsid, an emptied environment and a double fork ends with the call,
// also where the daemon tracks trees by walking /proc (an ordinary user's
// daemon): it is still in the call's PID namespace, which ends with the
// tree's init. Without the namespaces it usually gets away (logged).
func TestAttackLeftoverDiesWithTheCall(t *testing.T) {
	t.Parallel()
	for _, mode := range []proctree.Mode{proctree.ModeAuto, proctree.ModeSubreaper} {
		e := newConfinedEnvMode(t, nil, mode)
		e.needNamespaces(t)
		token := strconv.Itoa(900+os.Getpid()%100) + "." + strconv.Itoa(int(mode)) + strconv.Itoa(os.Getpid())
		// The call waits until its leftover runs, then ends.
		script := `setsid sh -c 'env -i /bin/sh -c "sleep ` + token + ` </dev/null >/dev/null 2>&1 &"' </dev/null >/dev/null 2>&1 &
i=0; until grep -qs ` + token + ` /proc/[0-9]*/cmdline; do i=$((i+1)); [ $i -gt 2000 ] && exit 9; sleep 0.005; done; exit 0`
		if _, stderr, code := e.sh(t, Default, script); code != 0 {
			t.Fatalf("%s: the leftover did not start: exit %d %s", mode, code, stderr)
		}
		testwait.For(t, "the leftover to end with its call ("+mode.String()+")", func() bool { return findCmdline("sleep\x00"+token) == "" })

		off := newConfinedEnvMode(t, nil, mode).withoutNamespaces()
		if _, _, code := off.sh(t, Default, script); code == 0 {
			if pid := findCmdline("sleep\x00" + token); pid != "" {
				t.Logf("%s without namespaces: the leftover %s outlived its call", mode, pid)
				if n, err := strconv.Atoi(pid); err == nil {
					_ = syscall.Kill(n, syscall.SIGKILL)
				}
			}
		}
	}
}

// TestAttackOtherToolsProc: a confined tool cannot read another running
// tool's environment, command line, status, memory map or open files
// through /proc, nor the daemon's, nor list them: each call has a PID
// namespace and a /proc of its own, where only its processes exist. Where
// the kernel gives no namespaces, Landlock (each call a domain of its own,
// which may inspect only processes inside it) still guards environ, maps
// and fd; command lines and the list are then readable (sandbox check
// says so). The same script with the namespaces switched off reads the
// victim's command line and lists it: the attack is real.
func TestAttackOtherToolsProc(t *testing.T) {
	t.Parallel()
	e := newConfinedEnv(t, nil)
	if e.sb.Capabilities().LandlockABI < 1 {
		t.Skip("no Landlock here")
	}
	e.needNamespaces(t)
	marker := "victim-" + strconv.Itoa(os.Getpid()) + "-" + filepath.Base(e.dir)
	refused := func(r string) bool { return r == "EACCES" || r == "EPERM" || r == "ENOENT" || r == "ESRCH" }
	for _, victimProfile := range []string{Default, None} {
		r, err := e.sb.Wrap(Command{Tool: "victim", Profile: victimProfile, Path: "/bin/sh",
			Args: []string{"sh", "-c", "sleep 60; : " + marker}, Env: []string{"PATH=/usr/bin:/bin", "VICTIM_SECRET=hunter2"}, Dir: e.dir})
		if err != nil {
			t.Fatal(err)
		}
		devnull, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		proc, tree, err := r.StartProcess(e.trees, &os.ProcAttr{Dir: e.dir, Files: []*os.File{devnull, devnull, devnull}})
		devnull.Close()
		if err != nil {
			t.Fatal(err)
		}
		// The victim's shell is running its sleep once the daemon sees the marker.
		victim := ""
		testwait.For(t, "the victim to run", func() bool {
			victim = findCmdline(marker)
			return victim != ""
		})
		script := `
def read(p):
    with open(p, "rb") as f:
        f.read()
def fds(p):
    os.readlink(p + "/1")
for who, pid in (("victim", "` + victim + `"), ("daemon", "` + strconv.Itoa(os.Getpid()) + `")):
    try_(who + " environ", lambda: read("/proc/%s/environ" % pid))
    try_(who + " maps", lambda: read("/proc/%s/maps" % pid))
    try_(who + " fd", lambda: fds("/proc/%s/fd" % pid))
    try_(who + " cmdline", lambda: read("/proc/%s/cmdline" % pid))
    try_(who + " status", lambda: read("/proc/%s/status" % pid))
seen = []
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if (b"` + marker[:3] + `" + b"` + marker[3:] + `") in f.read():  # not this script's own text
                    seen.append(d)
        except OSError:
            pass
print("list: " + ("victim seen" if seen else "victim hidden"))
`
		for _, profile := range []string{Default, Offline} {
			got := e.attack(t, profile, script)
			for _, who := range []string{"victim", "daemon"} {
				for _, what := range []string{"environ", "maps", "fd", "cmdline", "status"} {
					if r := got[who+" "+what]; !refused(r) {
						t.Errorf("%s reading a %s victim's… %s %s: %q, want a refusal", profile, victimProfile, who, what, r)
					}
				}
			}
			if got["list"] != "victim hidden" {
				t.Errorf("%s listing /proc with a %s victim: %s", profile, victimProfile, got["list"])
			}
		}
		if victimProfile == Default {
			// Unconfined, the same script reads the victim: the attack is real.
			if got := e.attack(t, None, script); got["victim environ"] != "ok" && os.Geteuid() == 0 {
				t.Errorf("unconfined: victim environ %q: the script does not attack", got["victim environ"])
			}
			// Without the namespaces, Landlock alone leaves the command line and the list.
			off := newConfinedEnv(t, nil).withoutNamespaces()
			if got := off.attack(t, Default, script); got["victim cmdline"] != "ok" || got["list"] != "victim seen" {
				t.Errorf("without namespaces: victim cmdline %q, %s: the script does not attack", got["victim cmdline"], got["list"])
			}
		}
		_ = tree.KillAndWait(5e9)
		_, _ = proc.Wait()
		tree.Release()
		r.Close()
	}
}

// findCmdline is the pid (as this process sees it) of a process whose
// command line holds s, or "".
func findCmdline(s string) string {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), s) {
			return d.Name()
		}
	}
	return ""
}
