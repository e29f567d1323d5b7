//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const cgroupRoot = "/sys/fs/cgroup"

// setupCgroup moves the daemon into a cgroup of the soak's own, so memory
// pressure applies to it and to nothing else. It needs root and cgroup v2
// with the memory controller; otherwise it returns why not.
func (r *rig) setupCgroup() string {
	if os.Geteuid() != 0 || !r.opts.privileged {
		return "needs root to make a cgroup of its own for the daemon"
	}
	controllers, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.subtree_control"))
	if err != nil {
		return "cgroup v1 here: it has no memory.high, and a hard limit OOM-kills rather than pressures"
	}
	if !strings.Contains(string(controllers), "memory") {
		return "the root cgroup does not delegate the memory controller"
	}
	dir := filepath.Join(cgroupRoot, fmt.Sprintf("vcpnode-soak-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "cannot make a cgroup: " + err.Error()
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(r.pid)), 0); err != nil {
		_ = os.Remove(dir)
		return "cannot move the daemon into a cgroup: " + err.Error()
	}
	r.cgroupDir = dir
	return ""
}

// removeCgroup removes the soak's cgroup once the daemon has exited.
func (r *rig) removeCgroup() {
	if r.cgroupDir != "" {
		_ = os.Remove(r.cgroupDir)
	}
}

// memoryPressure sets memory.high a little above what the daemon's cgroup
// uses now: the kernel reclaims and throttles, it does not kill.
func memoryPressure(fc *faultCtx) (func(), string, error) {
	dir := fc.r.cgroupDir
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
