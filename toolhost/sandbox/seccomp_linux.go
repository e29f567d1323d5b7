package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// The syscall filter every confined command gets from the launcher, last,
// right before execve. Facts from Docker's default profile, bubblewrap and
// the Codex CLI's Linux sandbox; the filter is an allow-by-default list of
// what a tool has no business doing, since a tool may run any program.

// deniedSyscalls answer EPERM whatever their arguments: other namespaces
// than the sandbox's own, the mount family, reading or changing other
// processes, the kernel keyring, BPF and perf, modules and kexec, reboot,
// swap, the clock, raw I/O ports, kernel log, io_uring (whose requests
// would pass by the socket rules below) and file handles (which pass by
// paths and so by Landlock).
var deniedSyscalls = []string{
	"setns",
	"mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig",
	"fsmount", "fspick", "mount_setattr",
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	"keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "userfaultfd", "lookup_dcookie", "fanotify_init",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"iopl", "ioperm", "syslog", "vhangup",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"open_by_handle_at",
}

// nsFlags are the namespace flags of clone and unshare.
const nsFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// errnoAction answers a syscall with errno, without running it.
func errnoAction(errno unix.Errno) seccomp.Action {
	return seccomp.Action(uint32(seccomp.ActionErrno) | uint32(errno))
}

// low32Is matches argument arg when its low 32 bits are v, whatever its
// high ones: the kernel reads an int or unsigned int argument from the low
// half of the register, so a filter that compared all 64 bits would let
// the same call through with garbage above. Each set bit of v must be set,
// every other low bit clear.
func low32Is(argN uint32, v uint32) []seccomp.Condition {
	var cs []seccomp.Condition
	for b := v; b != 0; b &= b - 1 {
		cs = append(cs, seccomp.Condition{Argument: argN, Operation: seccomp.BitsSet, Value: uint64(1) << bits.TrailingZeros32(b)})
	}
	return append(cs, seccomp.Condition{Argument: argN, Operation: seccomp.BitsNotSet, Value: uint64(^v)})
}

// familyNotIn matches socket's domain argument (0) outside fams (all
// below 64): any value above the largest, high half included (refusing a
// call with garbage there is safe: no program means one), or a smaller one
// not listed.
func familyNotIn(fams ...uint32) []seccomp.ArgumentConditions {
	top := slices.Max(fams)
	out := []seccomp.ArgumentConditions{{{Argument: 0, Operation: seccomp.GreaterThan, Value: uint64(top)}}}
	for f := uint32(0); f < top; f++ {
		if !slices.Contains(fams, f) {
			out = append(out, seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.Equal, Value: uint64(f)}})
		}
	}
	return out
}

// and is a set of conditions holding together.
func and(sets ...[]seccomp.Condition) seccomp.ArgumentConditions {
	var out seccomp.ArgumentConditions
	for _, s := range sets {
		out = append(out, s...)
	}
	return out
}

// sockType is the low bits of socket's type argument that hold the type
// (the rest are SOCK_NONBLOCK and SOCK_CLOEXEC).
const sockTypeMask = 0xf

// typeIs matches socket's type argument (1) of type t.
func typeIs(t uint32) []seccomp.Condition {
	var cs []seccomp.Condition
	for b := t; b != 0; b &= b - 1 {
		cs = append(cs, seccomp.Condition{Argument: 1, Operation: seccomp.BitsSet, Value: uint64(1) << bits.TrailingZeros32(b)})
	}
	return append(cs, seccomp.Condition{Argument: 1, Operation: seccomp.BitsNotSet, Value: uint64(sockTypeMask &^ t)})
}

// socketRules are the sets of socket(2) arguments refused under s: raw and
// packet sockets, and every family but Unix, internet and routing netlink
// sockets (systemd's RestrictAddressFamilies= of most services): vsock
// reaches a virtual machine's host, and the others are kernel code a
// process reaches by asking (a module loads for the family). When s
// denies the network, every family but AF_UNIX: Landlock's TCP rules do
// not see a Fast Open sendto connect nor a listen bind a port. Under
// connect_ports, every internet socket but a TCP stream: UDP, ICMP, SCTP
// and MPTCP have no port rules (Landlock's are TCP's) and a filter cannot
// see a datagram's address.
func (s filterShape) socketRules() []seccomp.ArgumentConditions {
	if s.netDeny {
		return familyNotIn(unix.AF_UNIX)
	}
	rules := familyNotIn(unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK)
	// Netlink but NETLINK_ROUTE (0), any bit in the high half included.
	rules = append(rules, and(low32Is(0, unix.AF_NETLINK), []seccomp.Condition{{Argument: 2, Operation: seccomp.GreaterThan, Value: unix.NETLINK_ROUTE}}))
	for _, fam := range []uint32{unix.AF_INET, unix.AF_INET6} {
		rules = append(rules, and(low32Is(0, fam), typeIs(unix.SOCK_RAW)), and(low32Is(0, fam), typeIs(unix.SOCK_PACKET)))
	}
	if !s.ports {
		return rules
	}
	for _, fam := range []uint32{unix.AF_INET, unix.AF_INET6} {
		dom := low32Is(0, fam)
		// The type is not SOCK_STREAM…
		for _, notStream := range []seccomp.Condition{
			{Argument: 1, Operation: seccomp.BitsSet, Value: sockTypeMask &^ unix.SOCK_STREAM},
			{Argument: 1, Operation: seccomp.BitsNotSet, Value: unix.SOCK_STREAM},
		} {
			rules = append(rules, and(dom, []seccomp.Condition{notStream}))
		}
		// …or the protocol is neither 0 nor IPPROTO_TCP (6): a bit outside
		// 6's, or exactly one of its two.
		rules = append(rules,
			and(dom, []seccomp.Condition{{Argument: 2, Operation: seccomp.BitsSet, Value: uint64(^uint32(unix.IPPROTO_TCP))}}),
			and(dom, []seccomp.Condition{{Argument: 2, Operation: seccomp.BitsSet, Value: 2}, {Argument: 2, Operation: seccomp.BitsNotSet, Value: 4}}),
			and(dom, []seccomp.Condition{{Argument: 2, Operation: seccomp.BitsSet, Value: 4}, {Argument: 2, Operation: seccomp.BitsNotSet, Value: 2}}))
	}
	return rules
}

// setuidRule is one syscall's argument sets that make a set-uid or
// set-gid file.
type setuidRule struct {
	name string
	sets []seccomp.ArgumentConditions
}

// setuidRules refuse making set-uid and set-gid files and directories
// (systemd's RestrictSUIDSGID=): a root daemon's tool is uid 0 and owns
// what it makes, and a set-uid file left in its folder would run as root
// for whoever starts it later, outside the sandbox. By chmod, at creation
// (O_CREAT, O_TMPFILE), by mknod and mkdir.
func setuidRules() []setuidRule {
	// A BitsSet condition holds when any of its bits is set.
	setid := func(mode uint32) seccomp.Condition {
		return seccomp.Condition{Argument: mode, Operation: seccomp.BitsSet, Value: unix.S_ISUID | unix.S_ISGID}
	}
	bits := func(mode uint32) []seccomp.ArgumentConditions {
		return []seccomp.ArgumentConditions{{setid(mode)}}
	}
	// O_TMPFILE is O_DIRECTORY plus a bit of its own: matching all of it
	// refused a plain directory open with stray mode bits. An O_TMPFILE
	// file with set-uid bits is refused: linkat gives it a name, set-uid.
	creating := func(flags, mode uint32) []seccomp.ArgumentConditions {
		return []seccomp.ArgumentConditions{{{Argument: flags, Operation: seccomp.BitsSet, Value: unix.O_CREAT | unix.O_TMPFILE&^unix.O_DIRECTORY}, setid(mode)}}
	}
	return []setuidRule{
		{"chmod", bits(1)}, {"fchmod", bits(1)}, {"fchmodat", bits(2)}, {"fchmodat2", bits(2)},
		{"creat", bits(1)}, {"open", creating(1, 2)}, {"openat", creating(2, 3)},
		{"mknod", bits(1)}, {"mknodat", bits(2)}, {"mkdir", bits(1)}, {"mkdirat", bits(2)},
	}
}

// filterRule: the filter answers syscall name with action, whatever its
// arguments when sets is empty, else when they match one of sets (every
// condition of one).
type filterRule struct {
	name   string
	action seccomp.Action
	sets   []seccomp.ArgumentConditions
}

// filterShape is all a filter program depends on: whether the policy
// denies the network, and whether connect_ports holds it to some TCP
// ports (which ones is Landlock's business, not the filter's).
type filterShape struct{ netDeny, ports bool }

func (p *policy) filterShape() filterShape {
	return filterShape{netDeny: p.NetDeny, ports: len(p.Ports) > 0}
}

// filterRules are what a filter of shape s refuses; a syscall this
// architecture does not have is left out when the filter is compiled.
func (s filterShape) filterRules() []filterRule {
	// clone3 passes its flags in memory a filter cannot read, and can
	// start a child in another cgroup (CLONE_INTO_CGROUP): ENOSYS makes
	// libc fall back to clone, whose flags it can.
	// openat2 passes its mode in memory too (setuidRules): ENOSYS makes
	// programs fall back to openat.
	rules := []filterRule{{name: "clone3", action: errnoAction(unix.ENOSYS)}, {name: "openat2", action: errnoAction(unix.ENOSYS)}}
	deny := func(name string, sets ...seccomp.ArgumentConditions) {
		rules = append(rules, filterRule{name: name, action: errnoAction(unix.EPERM), sets: sets})
	}
	for _, name := range deniedSyscalls {
		deny(name)
	}
	// New namespaces: with clone, and with unshare (where CLONE_NEWTIME is too).
	deny("clone", seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: nsFlags}})
	deny("unshare", seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: nsFlags | unix.CLONE_NEWTIME}})
	// Typing into a terminal, and the console's own requests.
	deny("ioctl", and(low32Is(1, unix.TIOCSTI)), and(low32Is(1, unix.TIOCLINUX)))
	deny("socket", s.socketRules()...)
	// Another process's limits, priority and scheduling: Landlock scopes
	// signals and ptrace, not these, and where the call has no PID
	// namespace the daemon and other tools of its uid are there to name
	// (RLIMIT_NOFILE 0 and the daemon opens nothing; SCHED_IDLE, or its
	// affinity pinned to a CPU the tool keeps busy, starves it). Only the
	// caller itself, as pid 0, which is how libc asks; a thread's or a
	// child's by its id is refused too (a filter cannot tell them apart).
	other := func(arg uint32) seccomp.ArgumentConditions {
		return seccomp.ArgumentConditions{{Argument: arg, Operation: seccomp.BitsSet, Value: 0xffffffff}}
	}
	for _, name := range []string{"prlimit64", "sched_setscheduler", "sched_setparam", "sched_setattr", "sched_setaffinity"} {
		deny(name, other(0))
	}
	deny("setpriority", other(0), other(1)) // PRIO_PROCESS (0), pid 0
	deny("ioprio_set", other(1), seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: 0xffffffff &^ 1}},
		seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsNotSet, Value: 1}}) // IOPRIO_WHO_PROCESS (1), pid 0
	if s.netDeny {
		deny("socketpair", familyNotIn(unix.AF_UNIX)...)
	}
	for _, r := range setuidRules() {
		deny(r.name, r.sets...)
	}
	if s.ports {
		// A TCP Fast Open send connects without connect(2), where
		// Landlock's port rules are checked.
		for _, c := range []struct {
			name  string
			flags uint32
		}{{"sendto", 3}, {"sendmsg", 2}, {"sendmmsg", 3}} {
			deny(c.name, seccomp.ArgumentConditions{{Argument: c.flags, Operation: seccomp.BitsSet, Value: unix.MSG_FASTOPEN}})
		}
	}
	return rules
}

// assembledFilters: a filter's shape → its program assembled. The daemon
// compiles each of the few shapes once, and the launcher loads the
// program as it is.
var assembledFilters sync.Map

// assembleFilter sets p.Filter to p's filter program, a sequence of
// struct sock_filter in this machine's byte order.
func (p *policy) assembleFilter() error {
	if p.NoFilter {
		return nil
	}
	shape := p.filterShape()
	if prog, ok := assembledFilters.Load(shape); ok {
		p.Filter = prog.([]byte)
		return nil
	}
	info, err := arch.GetInfo("")
	if err != nil {
		return fmt.Errorf("syscall filter: %w", err)
	}
	prog, err := compileFilter(info, shape.filterRules())
	if err != nil {
		return err
	}
	p.Filter = prog
	assembledFilters.Store(shape, prog)
	return nil
}

// sockFilterSize is the size of a struct sock_filter.
const sockFilterSize = 8

// loadFilter puts p's filter on the calling thread; execve keeps it, and
// every process the command starts inherits it.
func (p *policy) loadFilter() error {
	if p.NoFilter {
		if p.Strict {
			return fmt.Errorf("%w: the kernel has no seccomp filters", ErrNotEnforced)
		}
		return nil
	}
	prog := p.Filter
	if len(prog) == 0 {
		return errors.New("syscall filter: none was assembled")
	}
	n := len(prog) / sockFilterSize
	if n > unix.BPF_MAXINSNS || len(prog)%sockFilterSize != 0 {
		return fmt.Errorf("syscall filter: a program of %d bytes", len(prog))
	}
	// seccomp refuses a filter to a thread without it (or CAP_SYS_ADMIN).
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	insts := make([]unix.SockFilter, n)
	for i := range insts {
		b := prog[i*sockFilterSize:]
		insts[i] = unix.SockFilter{Code: binary.NativeEndian.Uint16(b), Jt: b[2], Jf: b[3], K: binary.NativeEndian.Uint32(b[4:])}
	}
	fprog := unix.SockFprog{Len: uint16(n), Filter: &insts[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(insts)
	if errno != 0 {
		return fmt.Errorf("syscall filter: seccomp: %w", errno)
	}
	return nil
}
