package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// Options configure a Sandbox.
type Options struct {
	// Profiles are the resolved profiles (Resolve); nil: the built-ins.
	Profiles map[string]Profile
	// Default is the profile of a tool that names none; "" is "default".
	Default string
	// Tools maps a tool (plugin, MCP server, placeholder command) to the
	// profile it names.
	Tools map[string]string
	// Protected are never granted, even inside a granted tree: the node's
	// config file, key file, state directory, audit log.
	Protected []string
	// FileRoots are readable under every confining profile ([files] roots).
	FileRoots []string
	// Home expands ~ in profile paths; "" is the daemon's home directory.
	Home string
	// TempDir is where per-call temporary directories are made; "" is os.TempDir().
	TempDir string
	// Trees are the process trees the commands run in: limits go on a
	// tree's own cgroup v2 when it has one with the controllers.
	Trees *proctree.Manager
	// Require makes a machine that cannot enforce every part of a profile
	// in use an error instead of a warning.
	Require bool
	// ColdLaunch starts each confined command's launcher on the call's
	// path instead of handing the command to one started ahead (for
	// measurements; no launcher then waits between calls).
	ColdLaunch bool
	Log        zerolog.Logger
	// OnRefusal, when set, is told what a run's profile refused each time
	// Explain finds it (how `sandbox learn` collects them).
	OnRefusal func(kind, tool string, refused []Refusal)

	carved *sync.Map // profile name → its carved grants, per configuration
	// lastDerived is the Sandbox's, kept across configurations.
	lastDerived *sync.Map
	// protectedFor: a home → the canonical paths derived grants avoid.
	protectedFor *sync.Map
	// derivedCache: a command → its derived grants, for derivedTTL.
	derivedCache *sync.Map
	// hide, when set, replaces the trees a call does not see (hiddenTrees):
	// tests hide one of their own.
	hide []string
}

// Sandbox wraps commands for their profiles. Update swaps its
// configuration; a command started afterwards gets the new one.
type Sandbox struct {
	opts atomic.Pointer[Options]
	caps Capabilities
	// limits makes per-run limit groups.
	limits *limiter
	// lastDerived: a tool's key → the derived grants of its last start.
	lastDerived sync.Map
	// launchers wait for confined commands (Linux).
	launchers *launcherPool
}

// ErrNotEnforced: Require is set and the machine cannot enforce a profile in use.
var ErrNotEnforced = errors.New("sandbox profiles cannot be enforced here")

// New checks opts and detects what the machine enforces.
func New(opts Options) (*Sandbox, error) {
	s := &Sandbox{launchers: new(launcherPool)}
	s.caps, s.limits = detect(opts.Trees)
	if err := s.Update(opts); err != nil {
		return nil, err
	}
	return s, nil
}

// Update replaces the configuration (a reload); on error the old one stays.
func (s *Sandbox) Update(opts Options) error {
	if err := s.Check(&opts); err != nil {
		return err
	}
	for _, name := range opts.inUse() {
		if opts.Profiles[name].Off {
			opts.Log.Info().Str("profile", name).Msg("sandbox: tools under this profile run unconfined")
		}
	}
	if gaps := s.caps.gapsFor(opts.Profiles, opts.inUse()); len(gaps) > 0 {
		opts.Log.Warn().Strs("not_enforced", gaps).Str("mechanism", s.caps.Mechanism).Str("why", s.caps.Why).
			Str("limits_why", s.caps.LimitsWhy).
			Msg("sandbox: parts of the profiles in use are not enforced on this machine")
	}
	opts.carved = &sync.Map{}
	opts.protectedFor = &sync.Map{}
	opts.derivedCache = &sync.Map{}
	opts.lastDerived = &s.lastDerived
	s.opts.Store(&opts)
	return nil
}

// Check fills opts's defaults and reports what Update would refuse: an
// unknown profile, or (Require) a profile in use this machine cannot enforce.
func (s *Sandbox) Check(opts *Options) error {
	if opts.Profiles == nil {
		opts.Profiles = Builtins()
	}
	if opts.Default == "" {
		opts.Default = Default
	}
	if _, ok := opts.Profiles[opts.Default]; !ok {
		return fmt.Errorf("sandbox.profile: %w %q", ErrUnknownProfile, opts.Default)
	}
	names := make([]string, 0, len(opts.Tools))
	for tool := range opts.Tools {
		names = append(names, tool)
	}
	sort.Strings(names)
	for _, tool := range names {
		if name := opts.Tools[tool]; name != "" {
			if _, ok := opts.Profiles[name]; !ok {
				return fmt.Errorf("%s: %w %q", tool, ErrUnknownProfile, name)
			}
		}
	}
	if opts.Require {
		if gaps := s.caps.gapsFor(opts.Profiles, opts.inUse()); len(gaps) > 0 {
			return fmt.Errorf("%w (sandbox.require is set): not enforced for the profiles in use: %s", ErrNotEnforced, strings.Join(gaps, ", "))
		}
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	return nil
}

// inUse is the names of the profiles the default and the tools use: the
// default first, then the others sorted, so that what is said of them
// reads the same each time.
func (o *Options) inUse() []string {
	var names []string
	for _, n := range o.Tools {
		if n != "" && n != o.Default && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return append([]string{o.Default}, names...)
}

// ProfileFor is the name of the profile tool runs under.
func (s *Sandbox) ProfileFor(tool string) string {
	if s == nil {
		return None
	}
	o := s.opts.Load()
	if n := o.Tools[tool]; n != "" {
		return n
	}
	return o.Default
}

// Profile returns the resolved profile name.
func (s *Sandbox) Profile(name string) (Profile, bool) {
	p, ok := s.opts.Load().Profiles[name]
	return p, ok
}

// Capabilities is what the machine enforces.
type Capabilities struct {
	// Mechanism: "landlock" or "none".
	Mechanism   string `json:"mechanism"`
	LandlockABI int    `json:"landlock_abi"`
	Files       bool   `json:"files"`
	Network     bool   `json:"network"`
	// Seccomp: confined commands get the syscall filter (seccomp_linux.go).
	Seccomp bool `json:"seccomp"`
	// PidNS: each call runs in a PID namespace of its own with its own
	// /proc, and a mount namespace with a private /dev/shm (PrivateShm): a
	// root daemon, or an ordinary user's where user namespaces are allowed
	// (UserNS). NSWhy says why not.
	PidNS      bool   `json:"pid_namespace"`
	PrivateShm bool   `json:"private_shm"`
	UserNS     bool   `json:"user_namespace,omitempty"`
	NSWhy      string `json:"namespaces_why,omitempty"`
	// Memory, Pids, CPU: how each limit is applied ("cgroup v2", "cgroup v1",
	// "rlimit"), "" where it is not.
	Memory string `json:"memory,omitempty"`
	Pids   string `json:"pids,omitempty"`
	CPU    string `json:"cpu,omitempty"`
	// LimitsWhy says why a limit is not held by the tree's own cgroup v2.
	LimitsWhy string `json:"limits_why,omitempty"`
	// Why explains a mechanism that is missing.
	Why string `json:"why,omitempty"`
}

// NotEnforced lists what no profile gets on this machine.
func (c Capabilities) NotEnforced() []string {
	var out []string
	if !c.Files {
		out = append(out, "file access")
	}
	switch {
	case !c.Network && !c.Seccomp:
		out = append(out, "network")
	case !c.Network:
		out = append(out, "TCP ports (connect_ports)")
	}
	if !c.Seccomp {
		out = append(out, "syscall filter (namespaces, mount, ptrace, raw sockets, UDP, clone3)")
	}
	if !c.PidNS {
		out = append(out, "PID namespace: other tools' command lines and the process list are readable (needs a root daemon or user namespaces)")
	}
	if c.Files && !c.PrivateShm {
		out = append(out, "private /dev/shm (needs a mount namespace: a root daemon or user namespaces)")
	}
	for _, l := range []struct{ name, how string }{{"memory", c.Memory}, {"pids", c.Pids}, {"cpu", c.CPU}} {
		switch l.how {
		case "":
			out = append(out, l.name+" limit")
		case "rlimit":
			out = append(out, l.name+" limit per process only (rlimit, not the whole tree)")
		}
	}
	return out
}

// gapsFor lists what the named profiles ask for and the machine cannot give.
func (c Capabilities) gapsFor(profiles map[string]Profile, names []string) []string {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, n := range names {
		p, ok := profiles[n]
		if !ok || p.Off {
			continue
		}
		if !c.Files {
			add("file access")
		}
		// offline needs the filter: Landlock's TCP rules leave UDP, and a listen without bind.
		if !p.Network && !c.Seccomp || len(p.ConnectPorts) > 0 && !c.Network {
			add("network")
		}
		if !c.Seccomp {
			add("syscall filter")
		}
		if !c.PidNS {
			add("PID namespace")
		}
		if p.Memory > 0 && c.Memory == "" {
			add("memory limit")
		}
		if p.Pids > 0 && c.Pids == "" {
			add("pids limit")
		}
		if p.CPU > 0 && c.CPU == "" {
			add("cpu limit")
		}
	}
	return out
}

// WaitingLaunchers is how many launchers wait for confined commands now
// (started ahead of calls; Linux).
func (s *Sandbox) WaitingLaunchers() int { return s.launchers.waiting() }

// Capabilities reports what the machine enforces.
func (s *Sandbox) Capabilities() Capabilities { return s.caps }

// Gaps lists what the profiles in use ask for and this machine cannot
// enforce: what Require refuses, and what the warning at start names.
func (s *Sandbox) Gaps() []string {
	o := s.opts.Load()
	return s.caps.gapsFor(o.Profiles, o.inUse())
}

// Status is the sandbox section of the node's status.
type Status struct {
	Capabilities
	Default     string   `json:"default_profile"`
	Profiles    []string `json:"profiles"`
	NotEnforced []string `json:"not_enforced,omitempty"`
	Require     bool     `json:"require"`
}

// Status describes the sandbox for `vcpnode status`.
func (s *Sandbox) Status() Status {
	o := s.opts.Load()
	names := make([]string, 0, len(o.Profiles))
	for n := range o.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return Status{Capabilities: s.caps, Default: o.Default, Profiles: names,
		NotEnforced: s.caps.NotEnforced(), Require: o.Require}
}

// Command is one process to start for a tool.
type Command struct {
	// Tool names the tool (its profile, and error messages); Kind says
	// what it is ("plugin", "MCP server", "command").
	Tool, Kind string
	// Profile overrides the tool's configured profile when set.
	Profile string
	Path    string
	Args    []string // argv, Args[0] included
	Env     []string
	// Dir is the tool's own folder: readable and writable; "" for none.
	Dir string
	// Read are more files the command reads, whatever the profile (a warm
	// interpreter's bootstrap, which the node writes outside the folder).
	Read []string
	// Declared are the folders a plugin's manifest declares, as the plugin
	// host keeps them (a plugin writes its own manifest: it could grant
	// itself any tree); nil: read from the manifest in Dir.
	Declared *Declared
	// Own are the variables of Env the tool's own files set (a plugin's
	// config.env and manifest, which it writes): they reach the command,
	// but what it is granted is found without them (npm_config_cache
	// pointed at /etc/cron.d would be granted writable).
	Own []string
}

// Run is a wrapped command: start it with StartProcess (Env
// is the command's with TMPDIR set), Explain its failure, and Close it
// once its whole process tree has ended.
type Run struct {
	Path    string
	Args    []string
	Env     []string
	Profile string
	tool    string
	kind    string
	limits  Profile // the limits asked for
	tmp     string  // the per-call temporary directory
	pol     *policy // nil: unconfined
	// launchers: where a confined command's launcher may be waiting.
	launchers *launcherPool
	// userNS: the launcher starts in a user namespace (an ordinary user's namespaces).
	userNS bool
	// For telling what the profile refused: the tool's folder, the home
	// (~ in suggested grants), the node's own files.
	dir, home string
	protected []string
	onRefusal func(kind, tool string, refused []Refusal)

	// v2: control files of the tree's own cgroup v2 and their values,
	// written before anything of the call runs there (prepare).
	v2 map[string]string

	mu     sync.Mutex
	groups groups // per-run cgroup v1 limit groups, until Close
	// treeDir is the tree's own cgroup v2 holding limits (v2), until
	// the tree is released or the Run closed.
	treeDir string
	// seenV1, seenV2: what the groups and treeDir counted, read before they went.
	seenV1, seenV2 events
}
