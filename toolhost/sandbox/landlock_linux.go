package sandbox

import (
	"errors"
	"fmt"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// policy is what a confined command's process gets before it starts: the
// launcher applies it (launcher_linux.go).
type policy struct {
	Grants []Grant
	// NetDeny refuses every TCP connect and bind; Ports, when NetDeny is
	// false and Ports is not empty, are the only ports connect may reach.
	NetDeny bool
	Ports   []uint16
	// Tasks are the tasks files of the run's cgroup v1 limit groups.
	Tasks []string
	// Rlimits: resource → value, where no cgroup can hold a limit.
	Rlimits map[int]uint64
	// Strict fails instead of applying less than asked (sandbox.require).
	Strict bool
	// NoFilter: the kernel has no seccomp filters; the command gets none.
	NoFilter bool
	// Filter is the syscall filter program (assembleFilter).
	Filter []byte `json:",omitempty"`
	// Hide are trees the call does not see but for its grants (hide_linux.go).
	Hide []string `json:"hide,omitempty"`
	// NS: the command runs in namespaces of its own (ns_linux.go); nil: the machine's.
	NS *nsPlan `json:"ns,omitempty"`
}

// restrictThread confines the calling thread with no_new_privs and Landlock.
func (p *policy) restrictThread() error {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		if p.Strict {
			return fmt.Errorf("%w: Landlock is not available", ErrNotEnforced)
		}
		return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	}
	attr := llsys.RulesetAttr{HandledAccessFS: fsRights(abi)}
	if abi >= 4 {
		switch {
		case p.NetDeny:
			attr.HandledAccessNet = llsys.AccessNetBindTCP | llsys.AccessNetConnectTCP
		case len(p.Ports) > 0:
			attr.HandledAccessNet = llsys.AccessNetConnectTCP
		}
	} else if p.Strict && (p.NetDeny || len(p.Ports) > 0) {
		return fmt.Errorf("%w: Landlock ABI %d has no TCP rules", ErrNotEnforced, abi)
	}
	if abi >= 6 {
		attr.Scoped = llsys.ScopeAbstractUnixSocket | llsys.ScopeSignal
	}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	defer unix.Close(fd)
	for _, g := range p.Grants {
		if err := addGrant(fd, g, attr.HandledAccessFS); err != nil {
			return err
		}
	}
	if attr.HandledAccessNet&llsys.AccessNetConnectTCP != 0 {
		for _, port := range p.Ports {
			if err := llsys.LandlockAddNetPortRule(fd, &llsys.NetPortAttr{
				AllowedAccess: llsys.AccessNetConnectTCP, Port: uint64(port)}, 0); err != nil {
				return fmt.Errorf("landlock port rule %d: %w", port, err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// fsRights are the file system rights the kernel's ABI knows.
func fsRights(abi int) uint64 {
	last := map[int]uint64{1: llsys.AccessFSMakeSym, 2: llsys.AccessFSRefer, 3: llsys.AccessFSTruncate,
		4: llsys.AccessFSTruncate}[abi]
	switch {
	case abi >= 9:
		// Connecting to a Unix socket by its path (the system bus,
		// ssh-agent, a container runtime's socket): only those in a
		// writable tree, or made by the call itself.
		last = llsys.AccessFSResolveUnix
	case abi >= 5:
		last = llsys.AccessFSIoctlDev
	}
	return last<<1 - 1
}

// Rights of a granted path.
const (
	readFile = llsys.AccessFSExecute | llsys.AccessFSReadFile
	readDir  = readFile | llsys.AccessFSReadDir
	// writeFile: a regular file or device; no device ioctls (IoctlDev):
	// the only terminals a command uses are the stdio it inherits, which
	// Landlock does not check.
	writeFile = readFile | llsys.AccessFSWriteFile | llsys.AccessFSTruncate
	// notInTrees are never granted on a writable tree: making device
	// nodes (which, opened, would reach the kernel log, a disk or a
	// terminal) and device ioctls. FIFOs and Unix sockets stay: tools make
	// them in their folder and temporary directory.
	notInTrees = llsys.AccessFSMakeChar | llsys.AccessFSMakeBlock | llsys.AccessFSIoctlDev
)

// addGrant adds one path's rule: read or full rights, file rights only for
// a file.
func addGrant(fd int, g Grant, handled uint64) error {
	pfd, err := unix.Open(g.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // gone since the grants were made: nothing to allow
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return nil
	}
	dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	var access uint64
	switch {
	case dir && g.Write:
		access = handled &^ notInTrees
	case dir:
		access = readDir
	case g.Write:
		access = writeFile
	default:
		access = readFile
	}
	err = llsys.LandlockAddPathBeneathRule(fd, &llsys.PathBeneathAttr{AllowedAccess: access & handled, ParentFd: pfd}, 0)
	if err != nil && !errors.Is(err, unix.ENOMSG) {
		return fmt.Errorf("landlock rule for %s: %w", g.Path, err)
	}
	return nil
}
