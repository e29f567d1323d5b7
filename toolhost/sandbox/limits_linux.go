package sandbox

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	seccomp "github.com/elastic/go-seccomp-bpf"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// groupPrefix names the cgroup v1 limit groups: vcpnode-sb-<DaemonTag>-<n>.
const groupPrefix = "vcpnode-sb-"

// limiter makes per-run limit groups. Each of memory, pids and cpu is held
// by the tree's own cgroup v2 when its controller is enabled below the
// daemon's cgroup, else by a cgroup v1 group of that controller, else (memory
// and pids only) by an rlimit of each process.
type limiter struct {
	v2    map[string]bool   // controller → enabled in the trees' cgroups
	v1    map[string]string // controller → the daemon's own v1 group directory
	trees *proctree.Manager
}

// groupSeq numbers the limit groups of every limiter of the process: a
// new sandbox (a reload's, or a test's) must not name a group another
// one still holds.
var groupSeq atomic.Uint64

// mount is a cgroup v1 hierarchy's mount point and the group it shows as its root.
type mount struct{ dir, root string }

// v1Mounts finds the cgroup v1 hierarchies of memory, pids and cpu. Where
// the trees' cgroup v2 lives is proctree's to say (TreesCgroup).
func v1Mounts() map[string]mount {
	v1 := map[string]mount{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return v1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		left, right, ok := strings.Cut(sc.Text(), " - ")
		fields, rf := strings.Fields(left), strings.Fields(right)
		if !ok || len(fields) < 5 || len(rf) < 3 || rf[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(rf[2], ",") {
			if opt == "memory" || opt == "pids" || opt == "cpu" {
				if _, seen := v1[opt]; !seen {
					v1[opt] = mount{fields[4], fields[3]}
				}
			}
		}
	}
	return v1
}

// detect finds what this machine enforces.
func detect(trees *proctree.Manager) (Capabilities, *limiter) {
	c := Capabilities{Mechanism: "none"}
	abi, err := llsys.LandlockGetABIVersion()
	switch {
	case err != nil:
		c.Why = "Landlock is not available (kernel without it, or not in the lsm= list): " + err.Error()
	case abi < 1:
		c.Why = "Landlock is not available"
	default:
		c.Mechanism, c.LandlockABI, c.Files = "landlock", abi, true
		c.Network = abi >= 4
		if !c.Network {
			c.Why = "Landlock ABI " + strconv.Itoa(abi) + " has no TCP rules (ABI 4, Linux 6.7)"
		}
	}
	c.Seccomp = seccomp.Supported()
	if ok, why := nsSupport(); ok {
		c.PidNS, c.PrivateShm, c.UserNS = true, true, os.Geteuid() != 0
	} else {
		c.NSWhy = why
	}
	l := &limiter{v2: map[string]bool{}, v1: map[string]string{}, trees: trees}
	v1mnts := v1Mounts()
	// The trees' cgroups live where proctree makes them: after the daemon
	// moved into its leaf, /proc/self/cgroup names the leaf, not their parent.
	var dir, why string
	if trees != nil && trees.Mode() == proctree.ModeCgroup {
		dir, why = trees.TreesCgroup()
	}
	if dir == "" {
		c.LimitsWhy = "process trees have no cgroup v2 of their own"
	} else {
		ctl, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		for _, name := range strings.Fields(string(ctl)) {
			l.v2[name] = true
		}
		c.LimitsWhy = v2Why(dir, l.v2, why)
	}
	for _, name := range []string{"memory", "pids", "cpu"} {
		mnt, ok := v1mnts[name]
		if l.v2[name] || !ok {
			continue
		}
		dir, err := ownGroup(mnt, name)
		if err != nil || !probe(dir) {
			continue
		}
		l.v1[name] = dir
		removeStale(dir)
	}
	how := func(name string, rlimit bool) string {
		switch {
		case l.v2[name]:
			return "cgroup v2"
		case l.v1[name] != "":
			return "cgroup v1"
		case rlimit:
			return "rlimit"
		}
		return ""
	}
	c.Memory = how("memory", true)
	c.Pids = how("pids", os.Geteuid() != 0) // RLIMIT_NPROC does not bind root
	c.CPU = how("cpu", false)
	return c, l
}

// v2Why says why the trees' cgroups (children of dir) do not hold each of
// memory, pids and cpu; "" when they hold all three. failed is why the
// daemon could not enable them there (proctree's TreesCgroup).
func v2Why(dir string, enabled map[string]bool, failed string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	offered := strings.Fields(string(b))
	var off, held []string
	for _, name := range []string{"memory", "pids", "cpu"} {
		switch {
		case enabled[name]:
		case slices.Contains(offered, name):
			held = append(held, name)
		default:
			off = append(off, name)
		}
	}
	var why []string
	if len(off) > 0 {
		there := strings.Join(offered, " ")
		if there == "" {
			there = "none"
		}
		why = append(why, strings.Join(off, ", ")+" not offered to "+dir+" (its cgroup v2 controllers: "+there+
			"; a controller bound to a cgroup v1 hierarchy is not in cgroup v2)")
	}
	if len(held) > 0 {
		w := strings.Join(held, ", ") + " not enabled in " + filepath.Join(dir, "cgroup.subtree_control")
		if failed != "" {
			w += " (" + failed + ")"
		}
		why = append(why, w)
	}
	return strings.Join(why, "; ")
}

// ownGroup is the daemon's group of controller in the cgroup v1
// hierarchy mounted at mnt.
func ownGroup(mnt mount, controller string) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3) // id:controllers:path
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), controller) {
			rel := parts[2]
			if mnt.root != "/" {
				rel = strings.TrimPrefix(rel, mnt.root)
			}
			return filepath.Join(mnt.dir, rel), nil
		}
	}
	return "", errors.New("not in a group of " + mnt.dir)
}

// probe reports whether the daemon may make groups in dir.
// Each probe makes a group of its own: sandboxes made at once (a test
// binary's) would otherwise remove each other's and find nothing writable.
func probe(dir string) bool {
	p := filepath.Join(dir, groupPrefix+proctree.DaemonTag()+"-probe-"+strconv.FormatUint(probes.Add(1), 10))
	if err := os.Mkdir(p, 0o755); err != nil {
		return false
	}
	return syscall.Rmdir(p) == nil
}

var probes atomic.Uint64

// removeStale removes the empty limit groups of daemons that are gone.
func removeStale(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), groupPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		if tag, _, _ := strings.Cut(rest, "-"); proctree.DaemonGone(tag) {
			_ = syscall.Rmdir(filepath.Join(dir, e.Name()))
		}
	}
}

// sandboxTasks are the tasks of a call with namespaces that are the
// sandbox's, not the command's: the launcher, which stays as the
// command's parent (a Go program: its runtime's threads, five here), and
// the namespace's init. Without namespaces the launcher execs the command
// and leaves nothing.
const sandboxTasks = 6

// ownTasks is what the sandbox adds to a profile's pids in the limit it
// writes, so that the command's tree gets the pids the owner gave.
func (p *policy) ownTasks() int {
	if p.NS == nil {
		return 0
	}
	return sandboxTasks
}

// groups are one run's cgroup v1 limit groups, by controller.
type groups map[string]string

// make creates the groups p needs, and fills pol with how to join them
// (or set the limits otherwise); v2 are the control files of the tree's
// own cgroup v2 and their values, which the daemon writes (Run.prepare).
func (l *limiter) make(p Profile, pol *policy) (g groups, v2 map[string]string, err error) {
	g = groups{}
	id := groupPrefix + proctree.DaemonTag() + "-" + strconv.FormatUint(groupSeq.Add(1), 10)
	type setting struct {
		controller string
		files      [][2]string // file, value (v1 names)
		v2         [][2]string
		rlimit     int
		rlimitVal  uint64
	}
	var want []setting
	if p.Memory > 0 {
		// Without a group, RLIMIT_DATA (private writable memory: heap and
		// anonymous maps), not RLIMIT_AS: runtimes reserve address space far
		// beyond what they use (V8 its code range, Go over 1 GB at start), so
		// an address-space limit of a few hundred MB stops them starting.
		m := strconv.FormatInt(p.Memory, 10)
		want = append(want, setting{"memory",
			[][2]string{{"memory.limit_in_bytes", m}, {"memory.memsw.limit_in_bytes", m}},
			[][2]string{{"memory.max", m}, {"memory.swap.max", "0"}}, unix.RLIMIT_DATA, uint64(p.Memory)})
	}
	if p.Pids > 0 {
		n := strconv.Itoa(p.Pids + pol.ownTasks())
		want = append(want, setting{"pids", [][2]string{{"pids.max", n}}, [][2]string{{"pids.max", n}},
			unix.RLIMIT_NPROC, uint64(p.Pids)})
	}
	if p.CPU > 0 {
		quota := strconv.FormatInt(int64(p.CPU*100000), 10)
		want = append(want, setting{"cpu",
			[][2]string{{"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", quota}},
			[][2]string{{"cpu.max", quota + " 100000"}}, -1, 0})
	}
	for _, s := range want {
		switch {
		case l.v2[s.controller] && l.trees != nil && l.trees.Mode() == proctree.ModeCgroup:
			if v2 == nil {
				v2 = map[string]string{}
			}
			for _, f := range s.v2 {
				v2[f[0]] = f[1]
			}
		case l.v1[s.controller] != "":
			dir := filepath.Join(l.v1[s.controller], id)
			if err := os.Mkdir(dir, 0o755); err != nil {
				g.remove()
				return nil, nil, err
			}
			g[s.controller] = dir
			for i, f := range s.files {
				err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0)
				if err != nil && (i == 0 || !errors.Is(err, os.ErrNotExist)) {
					g.remove()
					return nil, nil, err
				}
			}
			pol.Tasks = append(pol.Tasks, filepath.Join(dir, "tasks"))
		case s.rlimit >= 0 && (s.controller != "pids" || os.Geteuid() != 0):
			if pol.Rlimits == nil {
				pol.Rlimits = map[int]uint64{}
			}
			pol.Rlimits[s.rlimit] = s.rlimitVal
		}
	}
	return g, v2, nil
}

// events reads what the kernel counted in the run's cgroup v1 groups.
func (g groups) events() events {
	var e events
	if dir := g["memory"]; dir != "" {
		e.oomKills = counter(filepath.Join(dir, "memory.oom_control"), "oom_kill")
		if counter(filepath.Join(dir, "memory.failcnt"), "") > 0 && counter(filepath.Join(dir, "memory.oom_control"), "under_oom") > 0 {
			e.oom = 1
		}
	}
	if dir := g["pids"]; dir != "" {
		e.forks = counter(filepath.Join(dir, "pids.events"), "max")
	}
	return e
}

// treeEvents reads what the kernel counted in a tree's own cgroup v2 (dir)
// against p's limits (a controller not enabled there has no files: nothing).
func treeEvents(dir string, p Profile) events {
	var e events
	if p.Memory > 0 {
		e.oomKills = counter(filepath.Join(dir, "memory.events"), "oom_kill")
		e.oom = counter(filepath.Join(dir, "memory.events"), "oom")
	}
	if p.Pids > 0 {
		e.forks = counter(filepath.Join(dir, "pids.events"), "max")
	}
	return e
}

// counter reads "key N" from a flat-keyed control file (key "": the whole file is N).
func counter(file, key string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if key == "" && len(f) == 1 || len(f) == 2 && f[0] == key {
			n, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
			return n
		}
	}
	return 0
}

// remove deletes the groups; they are empty once the run's tree has ended
// (the kernel may take a moment to account the last exit).
func (g groups) remove() {
	for c, dir := range g {
		err := syscall.Rmdir(dir)
		for i := 0; errors.Is(err, syscall.EBUSY) && i < 50; i++ {
			time.Sleep(10 * time.Millisecond) // the last exit is being accounted
			err = syscall.Rmdir(dir)
		}
		delete(g, c)
	}
}
