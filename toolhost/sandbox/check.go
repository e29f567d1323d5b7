package sandbox

import (
	"fmt"
	"strconv"
)

// Protection is one line of `vcpnode sandbox check`: one thing a hostile
// tool cannot do under a profile, and whether this machine stops it.
type Protection struct {
	Name string `json:"name"`
	// State is StateEnforced, StateNotEnforced or StateNotAsked.
	State string `json:"state"`
	// Needs is the kernel feature (or privilege) it takes.
	Needs string `json:"needs"`
	// Detail says how it is held here, or why not.
	Detail string `json:"detail,omitempty"`
}

// States of a Protection.
const (
	StateEnforced    = "enforced"
	StateNotEnforced = "NOT ENFORCED"
	StateNotAsked    = "not asked" // the profile does not ask for it
)

// Protections lists, one by one, what a tool under profile is kept from
// doing and whether this machine keeps it from it, for a daemon running
// as uid: the machine's detected features, not a probe (Probe adds one).
func (s *Sandbox) Protections(profile string, uid int) ([]Protection, error) {
	p, ok := s.Profile(profile)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownProfile, profile)
	}
	c := s.caps
	var out []Protection
	add := func(name string, enforced bool, needs, detail string) {
		st := StateNotEnforced
		if enforced {
			st = StateEnforced
		}
		out = append(out, Protection{Name: name, State: st, Needs: needs, Detail: detail})
	}
	asked := func(name, needs, detail string) {
		out = append(out, Protection{Name: name, State: StateNotAsked, Needs: needs, Detail: detail})
	}
	if p.Off {
		add("confinement", false, "", "profile "+strconv.Quote(profile)+" runs tools unconfined, with the daemon's rights")
		return out, nil
	}
	root := uid == 0
	landlock := "Landlock (Linux 5.13, in the lsm= list)"
	add("files: only the profile's trees, the tool's folder and its TMPDIR", c.Files, landlock, c.Why)
	add("node's own files (key, config, state, audit log) out of reach", c.Files, landlock, "")
	switch {
	case !p.Network:
		d := "syscall filter: Unix sockets only"
		if !c.Seccomp {
			d = "UDP, netlink, a listen without bind and TCP Fast Open stay open without the syscall filter"
		}
		add("network: none (no TCP, UDP, ICMP, netlink)", c.Seccomp, "seccomp", d)
	case len(p.ConnectPorts) > 0:
		add(fmt.Sprintf("network: TCP connect to ports %v only", p.ConnectPorts), c.Network, "Landlock ABI 4 (Linux 6.7)", c.Why)
		add("network: no UDP, ICMP, SCTP, nor TCP Fast Open past the port rules (names resolve over TCP: RES_OPTIONS=use-vc)", c.Seccomp, "seccomp", "")
	default:
		asked("network: limited", "", "profile "+strconv.Quote(profile)+" allows every TCP and UDP connection")
	}
	if p.Network {
		add("socket families: Unix, internet and routing netlink only (no vsock, AF_ALG, Bluetooth, other netlink…)", c.Seccomp, "seccomp", "")
	}
	add("raw and packet sockets", c.Seccomp || root, "seccomp, or no CAP_NET_RAW", "")
	switch {
	case root:
		add("capabilities: none (effective, permitted, inheritable, ambient, bounding)", true, "capset, PR_CAPBSET_DROP", "dropped by the launcher")
	case c.UserNS:
		add("capabilities: none (effective, permitted, inheritable, ambient, bounding)", true, "a user namespace",
			"the bounding set is emptied inside the call's user namespace")
	default:
		add("capabilities: none (effective, permitted, inheritable, ambient)", true, "nothing: an ordinary user's daemon has none",
			"the bounding set stays as given (dropping it needs CAP_SETPCAP); no_new_privs keeps any from being raised")
	}
	add("no_new_privs: no set-uid or file capability raises a privilege", true, "Linux 3.5", "")
	filter := "seccomp filters (CONFIG_SECCOMP_FILTER)"
	add("no namespaces, mount, pivot_root", c.Seccomp, filter, "")
	add("no ptrace, process_vm_readv/writev", c.Seccomp, filter, "")
	add("no other process's limits, priority, scheduling or affinity changed (prlimit, setpriority, sched_*, ioprio_set)", c.Seccomp, filter,
		"the caller's own only, as pid 0")
	add("no keyring, bpf, perf_event_open, userfaultfd, io_uring", c.Seccomp, filter, "")
	add("no module or kexec loading, reboot, swapon/off, clock changes", c.Seccomp || root, filter+", or no capabilities", "")
	add("no typing into a terminal (TIOCSTI, TIOCLINUX)", c.Seccomp, filter, "")
	add("no set-uid or set-gid file made (one left behind would run as its owner for whoever starts it)", c.Seccomp, filter, "openat2 answers ENOSYS; programs fall back to openat")
	add("no clone3 (no CLONE_INTO_CGROUP: the tree's cgroup is kept)", c.Seccomp, filter, "clone3 answers ENOSYS; libc falls back to clone")
	if t := s.opts.Load().Trees; t != nil {
		held, how := t.Containment(c.Seccomp)
		if !held && c.PidNS {
			// The walk may miss an orphan; the call's PID namespace does not.
			held, how = true, "the call's PID namespace, whose init the tree's end kills with every process in it"
		}
		add("no process outlives its call, its timeout, async_max_runtime or the daemon", held, "a cgroup v2 of the daemon's own (delegated, or root), or a PID namespace", how)
	}
	add("no device node made in a writable folder", c.Files || root, landlock+", or no CAP_MKNOD", "")
	add("devices one by one: null, zero, full, random, urandom; no terminal", c.Files, landlock, "")
	add("no device ioctls on opened devices", c.LandlockABI >= 5, "Landlock ABI 5 (Linux 6.10)", "")
	nsNeeds := "a root daemon, or user namespaces for an ordinary user's (user.max_user_namespaces > 0, no LSM refusing them)"
	nsDetail := func(held string) string {
		if c.PidNS {
			return held
		}
		return c.NSWhy
	}
	add("/dev/shm private to the call", c.PrivateShm, "a mount namespace: "+nsNeeds,
		nsDetail("a fresh tmpfs, gone with the call"))
	add("System V IPC (shared memory, semaphores, message queues) private to the call", c.PidNS, "an IPC namespace: "+nsNeeds,
		nsDetail("gone with the call"))
	add("/tmp and /var/tmp not writable (a private TMPDIR instead)", c.Files, landlock, "")
	add("no mode, times, owner or attributes changed outside its writable trees (chmod, touch, setxattr: no Landlock right)", c.PidNS,
		"a mount namespace: "+nsNeeds, nsDetail("every mount read-only but the call's writable grants"))
	add("other tools' and the daemon's /proc environ, maps, mem, fd", c.Files || c.PidNS, landlock+" (ptrace scoping), or a PID namespace", "")
	add("other tools' command lines, status and the process list hidden", c.PidNS, "a PID namespace and its own /proc: "+nsNeeds,
		nsDetail("the call sees its own processes only; its init ends them all with the call"))
	if !c.PidNS {
		out[len(out)-1].Detail = "other tools' command lines are readable: " + c.NSWhy
	}
	add("no connect to Unix sockets by path outside its writable trees (the system bus, ssh-agent, a container runtime's)", c.LandlockABI >= 9,
		"Landlock ABI 9 (Linux 7.1)", unixPathDetail(c.LandlockABI, root, c.PidNS))
	add("no signals or abstract Unix sockets outside the call", c.LandlockABI >= 6, "Landlock ABI 6 (Linux 6.12)", "")
	for _, l := range []struct {
		name, how string
		set       bool
	}{{"memory", c.Memory, p.Memory > 0}, {"pids", c.Pids, p.Pids > 0}, {"cpu", c.CPU, p.CPU > 0}} {
		name := l.name + " limit of the whole tree"
		switch {
		case !l.set:
			asked(name, "cgroup v2 or v1", "profile "+strconv.Quote(profile)+" sets none")
		case l.how == "rlimit":
			add(name, false, "cgroup v2 or v1", joinWhy("per process only (rlimit)", c.LimitsWhy))
		case l.how == "cgroup v2":
			add(name, true, "cgroup v2 or v1", "cgroup v2, in force before the call's first instruction")
		case l.how != "":
			add(name, true, "cgroup v2 or v1", joinWhy(l.how+", joined before the command's exec", c.LimitsWhy))
		default:
			add(name, false, "cgroup v2 or v1", c.LimitsWhy)
		}
	}
	return out, nil
}

// joinWhy is detail followed by why, when there is one.
func joinWhy(detail, why string) string {
	if why == "" {
		return detail
	}
	return detail + "; " + why
}

// unixPathDetail says what a tool reaches by a Unix socket's path where
// Landlock cannot refuse it; hidden: the call's /run is empty but for its
// grants (hide_linux.go).
func unixPathDetail(abi int, root, hidden bool) string {
	switch {
	case abi >= 9:
		return ""
	case hidden:
		return "the call's /run is empty but for its grants (no systemd, D-Bus or container runtime socket there); " +
			"a socket elsewhere (/tmp: ssh-agent, X11) still answers"
	case root:
		return "a tool connects to every socket root may: systemd's, D-Bus's or a container runtime's run commands outside the sandbox"
	}
	return "a tool connects to every socket of its user: the session bus, ssh-agent"
}
