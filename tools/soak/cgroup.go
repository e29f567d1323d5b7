//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const cgroupRoot = "/sys/fs/cgroup"

// setupCgroup makes a memory cgroup of the soak's own for the daemon, so
// memory pressure applies to it (and the plugins it starts) and to nothing
// else: on cgroup v2 with the memory controller, below the root; on a v1
// memory hierarchy (also the hybrid layout, whose v2 part has no memory
// controller), below the soak's own group. The daemon joins it before it
// runs (joinCgroup), so every process it starts is in it too. It needs
// root; otherwise, or when neither is there, it returns why not.
func (r *rig) setupCgroup() string {
	if os.Geteuid() != 0 || !r.opts.privileged {
		return "needs root to make a cgroup of its own for the daemon"
	}
	name := fmt.Sprintf("vcpnode-soak-%d-%d", os.Getpid(), r.opts.seed) // seeds of a list run at once
	var dir string
	if ctl, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.subtree_control")); err == nil {
		if !strings.Contains(string(ctl), "memory") {
			return "the root cgroup (v2) does not delegate the memory controller"
		}
		dir = filepath.Join(cgroupRoot, name)
	} else {
		own, err := ownV1Group("memory")
		if err != nil {
			return "no cgroup v2 memory controller and no v1 memory hierarchy: " + err.Error()
		}
		dir, r.cgroupV1 = filepath.Join(own, name), true
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "cannot make a memory cgroup: " + err.Error()
	}
	r.cgroupDir = dir
	return ""
}

// ownV1Group is this program's group in the v1 hierarchy of controller,
// from /proc/self/cgroup (the hierarchies are mounted at their root).
func ownV1Group(controller string) (string, error) {
	mnt := filepath.Join(cgroupRoot, controller)
	if _, err := os.Stat(filepath.Join(mnt, "cgroup.procs")); err != nil {
		return "", fmt.Errorf("no v1 %s hierarchy at %s", controller, mnt)
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3) // id:controllers:path
		if len(parts) == 3 && strings.Contains(","+parts[1]+",", ","+controller+",") {
			return filepath.Join(mnt, parts[2]), nil
		}
	}
	return "", fmt.Errorf("not in a v1 %s group", controller)
}

// joinCgroup prefixes the daemon's command with a shell that moves itself
// into the soak's cgroup and then execs the command (same pid), so that
// the daemon and all it starts are in the group from the first instruction.
func (r *rig) joinCgroup(args []string) []string {
	if r.cgroupDir == "" {
		return args
	}
	return append([]string{"/bin/sh", "-c", `echo 0 > "$0" && exec "$@"`, filepath.Join(r.cgroupDir, "cgroup.procs")}, args...)
}

// removeCgroup removes the soak's cgroup once the daemon has exited.
func (r *rig) removeCgroup() {
	if r.cgroupDir == "" {
		return
	}
	// Groups a daemon killed by SIGKILL left below (empty by now).
	entries, _ := os.ReadDir(r.cgroupDir)
	for _, e := range entries {
		if e.IsDir() {
			_ = syscall.Rmdir(filepath.Join(r.cgroupDir, e.Name()))
		}
	}
	_ = syscall.Rmdir(r.cgroupDir)
}

// memoryPressure squeezes the daemon's cgroup: on v2, memory.high a little
// above what it uses (the kernel reclaims and throttles, it does not kill);
// on v1, which has no memory.high, a hard limit with room above the
// anonymous memory of the daemon and its plugins, so the kernel reclaims
// their page cache and throttles, and OOM-kills a plugin when they need
// more (a failed call, which the invariants allow); the daemon must
// survive and keep serving.
func memoryPressure(fc *faultCtx) (func(), string, error) {
	dir := fc.r.cgroupDir
	if fc.r.cgroupV1 {
		return memoryPressureV1(fc, dir)
	}
	cur, err := os.ReadFile(filepath.Join(dir, "memory.current"))
	if err != nil {
		return nil, "", err
	}
	used, _ := strconv.ParseInt(strings.TrimSpace(string(cur)), 10, 64)
	high := used + 8<<20
	if err := os.WriteFile(filepath.Join(dir, "memory.high"), []byte(strconv.FormatInt(high, 10)), 0); err != nil {
		return nil, "", err
	}
	return func() { _ = os.WriteFile(filepath.Join(dir, "memory.high"), []byte("max"), 0) },
		fmt.Sprintf("memory.high %.1f MiB (uses %.1f)", mib(high), mib(used)), nil
}

// v1Headroom is the room above the group's anonymous memory under the
// v1 limit: a plugin process or two and the daemon's buffers for a 1 MiB
// call. Without swap there is little else to reclaim, so more plugins at
// once than that means an OOM kill.
const v1Headroom = 24 << 20

// victimScore is the oom_score_adj of every process below the daemon while
// memory is pressed: the kernel then picks a plugin over the daemon, as a
// service manager protecting its daemon would arrange (the soak's plugins
// set it on themselves, helpers.go; preferPlugins catches the rest, such as
// a Node.js host started during the fault). The daemon keeps its own.
const victimScore = "1000"

// preferPlugins makes the processes now below the daemon the OOM killer's
// first choice.
func preferPlugins(daemon int) {
	for _, p := range descendants(daemon) {
		_ = os.WriteFile(fmt.Sprintf("/proc/%d/oom_score_adj", p), []byte(victimScore), 0)
	}
}

func memoryPressureV1(fc *faultCtx, dir string) (func(), string, error) {
	stat, err := readKeyed(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return nil, "", err
	}
	usage, err := readInt(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return nil, "", err
	}
	failBefore, _ := readInt(filepath.Join(dir, "memory.failcnt"))
	oomBefore := oomKills(dir)
	anon, cache := stat["total_rss"], stat["total_cache"]
	limit := anon + v1Headroom
	preferPlugins(fc.r.pid)
	stopPreferring := make(chan struct{})
	preferring := make(chan struct{})
	go func() {
		defer close(preferring)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopPreferring:
				return
			case <-t.C:
				preferPlugins(fc.r.pid)
			}
		}
	}()
	set := func(file string, v int64) error {
		return os.WriteFile(filepath.Join(dir, file), []byte(strconv.FormatInt(v, 10)), 0)
	}
	// The soft limit acts under global pressure only; set it too, so the
	// daemon's group is the first reclaimed if the machine runs short.
	if err := set("memory.soft_limit_in_bytes", anon); err != nil {
		return nil, "", err
	}
	if err := set("memory.limit_in_bytes", limit); err != nil {
		_ = set("memory.soft_limit_in_bytes", -1)
		close(stopPreferring)
		<-preferring
		return nil, "", fmt.Errorf("memory.limit_in_bytes %d: %w", limit, err)
	}
	return func() {
			_ = set("memory.limit_in_bytes", -1)
			close(stopPreferring)
			<-preferring
			_ = set("memory.soft_limit_in_bytes", -1)
			failed, _ := readInt(filepath.Join(dir, "memory.failcnt"))
			hits, kills := failed-failBefore, oomKills(dir)-oomBefore
			fc.r.memLimitHits.Add(hits)
			fc.r.memOOMKills.Add(kills)
			fc.r.rec.note("fault-note", "", "#"+strconv.Itoa(fc.n), fmt.Sprintf("memory limit reached %d times, %d processes OOM-killed in the daemon's group", hits, kills))
		}, fmt.Sprintf("v1 memory.limit_in_bytes %.1f MiB (uses %.1f: %.1f anonymous, %.1f cache)",
			mib(limit), mib(usage), mib(anon), mib(cache)), nil
}

// oomKills is the oom_kill count of a v1 memory group (0 when unknown).
func oomKills(dir string) int64 {
	m, _ := readKeyed(filepath.Join(dir, "memory.oom_control"))
	return m["oom_kill"]
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// readKeyed reads a cgroup file of "key value" lines.
func readKeyed(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil {
			m[k] = n
		}
	}
	if len(m) == 0 {
		return nil, errors.New(path + ": no values")
	}
	return m, nil
}
