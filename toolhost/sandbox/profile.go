// Package sandbox confines every process a tool call starts under a
// permission profile: which trees it may read and write, whether and where
// it may connect, and how much memory, how many processes and how much CPU
// its process tree may use.
//
// On Linux a confined command is started through the launcher: the running
// binary started again, which confines itself (limit groups, no_new_privs,
// Landlock) and execs the command, so the command and everything it starts
// hold the confinement from their first instruction while no daemon thread
// ever carries it. Limits on the tree's own cgroup v2 are set right after
// the start. Other systems do not enforce profiles, and say so.
package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Built-in profile names.
const (
	Default = "default"
	Offline = "offline"
	None    = "none"
)

// Spec is a profile as the configuration writes it ([sandbox.profiles.NAME]).
// Unset fields take the values of the profile it extends.
type Spec struct {
	Extends      string   `toml:"extends"`
	Read         []string `toml:"read"`
	Write        []string `toml:"write"`
	Network      *bool    `toml:"network"`
	ConnectPorts []int    `toml:"connect_ports"`
	Memory       string   `toml:"memory"`
	Pids         int      `toml:"pids"`
	CPU          float64  `toml:"cpu"`
}

// Profile is a resolved profile: its base's grants plus its own.
type Profile struct {
	Name string `json:"name"`
	// Off: no confinement at all (the built-in "none").
	Off   bool     `json:"off,omitempty"`
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Network false refuses every TCP connect and bind.
	Network bool `json:"network"`
	// ConnectPorts, when not empty, are the only TCP ports connect may reach.
	ConnectPorts []uint16 `json:"connect_ports,omitempty"`
	Memory       int64    `json:"memory,omitempty"` // bytes, 0: no limit
	Pids         int      `json:"pids,omitempty"`   // 0: no limit
	CPU          float64  `json:"cpu,omitempty"`    // cores, 0: no limit
}

// FieldError is a problem with one key of one profile, for the config's
// error positions: Key is "profiles.NAME.FIELD" below [sandbox].
type FieldError struct {
	Key string
	Err error
}

func (e *FieldError) Error() string { return "sandbox." + e.Key + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// ErrUnknownProfile: a name that is neither built in nor configured.
var ErrUnknownProfile = errors.New("unknown sandbox profile")

// systemRead are the trees every confining built-in profile reads: the
// system, interpreters and their libraries, and the few devices and proc
// files programs expect. Missing ones are skipped.
var systemRead = []string{
	"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt",
	"/proc", "/sys/fs/cgroup", "/sys/devices/system/cpu", "/run/systemd/resolve",
	"/nix/store", "/snap", "/usr/local",
	// Devices one by one; no terminal (/dev/tty, /dev/pts) but the stdio a command inherits.
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/shm", "/dev/fd",
	// The user's own interpreters and libraries (not the rest of home).
	"~/.local/lib", "~/.local/bin", "~/.local/share/pnpm", "~/.pyenv", "~/.nvm", "~/.volta",
	"~/.npm-global", "~/.deno", "~/.bun", "~/.cargo/bin", "~/go/bin",
	// The user's git settings: git stops at a config file it may not read,
	// and tools run git from their scripts (~/.git-credentials stays out).
	"~/.gitconfig", "~/.config/git",
}

// devWrite are the devices every confining profile may also write, and
// /dev/shm (POSIX shared memory and semaphores: Python's multiprocessing),
// private to the call where the launcher can mount it (ns_linux.go).
var devWrite = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/shm"}

// Builtins are the built-in profiles. The tool's own folder and the per-call
// temporary directory are added to Write at launch, [files] roots to Read.
func Builtins() map[string]Profile {
	def := Profile{Name: Default, Read: slices.Clone(systemRead), Write: slices.Clone(devWrite), Network: true}
	off := def
	off.Name, off.Network = Offline, false
	off.Read, off.Write = slices.Clone(def.Read), slices.Clone(def.Write)
	return map[string]Profile{Default: def, Offline: off, None: {Name: None, Off: true, Network: true}}
}

// Resolve turns configured specs into profiles, built-ins included (a spec
// named like a built-in replaces it, extending the built-in when it names
// itself as its base). Every problem is a *FieldError.
func Resolve(specs map[string]Spec) (map[string]Profile, error) {
	out := Builtins()
	builtin := Builtins()
	done := map[string]bool{}
	var errs []error
	var resolve func(name string, chain []string) (Profile, bool)
	resolve = func(name string, chain []string) (Profile, bool) {
		if done[name] {
			return out[name], true
		}
		spec, ok := specs[name]
		if !ok {
			p, ok := builtin[name]
			return p, ok
		}
		base := Profile{Name: name}
		if spec.Extends != "" {
			switch {
			case spec.Extends == name && builtin[name].Name != "":
				base = builtin[name]
			case spec.Extends == name || slices.Contains(chain, spec.Extends):
				errs = append(errs, &FieldError{"profiles." + name + ".extends",
					fmt.Errorf("profile %q extends itself (%s)", name, strings.Join(append(chain, name, spec.Extends), " → "))})
				return Profile{}, false
			default:
				b, ok := resolve(spec.Extends, append(chain, name))
				if !ok {
					if _, known := specs[spec.Extends]; !known {
						errs = append(errs, &FieldError{"profiles." + name + ".extends",
							fmt.Errorf("%w %q", ErrUnknownProfile, spec.Extends)})
					}
					return Profile{}, false
				}
				base = b
			}
		}
		p, perrs := apply(name, base, spec)
		errs = append(errs, perrs...)
		out[name], done[name] = p, true
		return p, len(perrs) == 0
	}
	names := make([]string, 0, len(specs))
	for name := range specs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		resolve(name, nil)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// apply lays spec over base.
func apply(name string, base Profile, spec Spec) (Profile, []error) {
	p := base
	p.Name = name
	p.Read = slices.Clone(base.Read)
	p.Write = slices.Clone(base.Write)
	var errs []error
	bad := func(field string, err error) { errs = append(errs, &FieldError{"profiles." + name + "." + field, err}) }
	for field, paths := range map[string][]string{"read": spec.Read, "write": spec.Write} {
		for _, path := range paths {
			if err := checkPath(path); err != nil {
				bad(field, err)
			}
		}
	}
	p.Read = append(p.Read, spec.Read...)
	p.Write = append(p.Write, spec.Write...)
	if spec.Network != nil {
		p.Network = *spec.Network
	}
	if spec.ConnectPorts != nil {
		p.ConnectPorts = nil
		for _, port := range spec.ConnectPorts {
			if port < 1 || port > 65535 {
				bad("connect_ports", fmt.Errorf("port %d is not between 1 and 65535", port))
				continue
			}
			p.ConnectPorts = append(p.ConnectPorts, uint16(port))
		}
	}
	if spec.Memory != "" {
		n, err := ParseSize(spec.Memory)
		if err != nil {
			bad("memory", err)
		}
		p.Memory = n
	}
	switch {
	case spec.Pids < 0:
		bad("pids", fmt.Errorf("%d is negative", spec.Pids))
	case spec.Pids > 0 && spec.Pids < minPids:
		bad("pids", fmt.Errorf("%d is too few to start anything: threads count (a Node.js tool is 7 to 11 tasks before it forks); give at least %d (16 or more for a tool that forks)", spec.Pids, minPids))
	case spec.Pids > 0:
		p.Pids = spec.Pids
	}
	if spec.CPU < 0 {
		bad("cpu", fmt.Errorf("%g is negative", spec.CPU))
	} else if spec.CPU > 0 {
		p.CPU = spec.CPU
	}
	if p.Off && (len(spec.Read) > 0 || len(spec.Write) > 0 || spec.Network != nil || spec.ConnectPorts != nil) {
		bad("extends", errors.New(`a profile based on "none" confines nothing: its read, write and network keys would not apply`))
	}
	return p, errs
}

// checkPath accepts absolute paths and ~/ paths.
func checkPath(path string) error {
	if path == "~" || strings.HasPrefix(path, "~/") || filepath.IsAbs(path) {
		return nil
	}
	return fmt.Errorf("path %q is relative: write it absolute or from ~/", path)
}

// minPids is the fewest tasks a command's tree can do anything with: a
// shell and what it runs, a runtime's threads (the sandbox's own tasks
// are added to the limit written: ownTasks).
const minPids = 8

// ParseSize reads a memory size: bytes, or a number with K, M, G, T,
// KiB, MiB, GiB, TiB (powers of 1024), KB, MB, GB (powers of 1000).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(t[:i]), strings.TrimSpace(t[i:])
	}
	mult, ok := map[string]float64{
		"": 1, "B": 1,
		"K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20, "G": 1 << 30, "GiB": 1 << 30, "T": 1 << 40, "TiB": 1 << 40,
		"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	}[unit]
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || f <= 0 {
		return 0, fmt.Errorf("memory %q is not a size such as \"512MiB\" or \"2G\"", s)
	}
	n := int64(f * mult)
	if n < 1<<20 {
		return 0, fmt.Errorf("memory %q is below 1MiB: no program starts with that", s)
	}
	return n, nil
}

// FormatSize writes n bytes the way ParseSize reads them.
func FormatSize(n int64) string {
	for _, u := range []struct {
		s string
		n int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.n && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
