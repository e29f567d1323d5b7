package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/vcpnode/vcpnode/toolhost/proctree"
)

// Probe starts a command under profile as a tool's would start (cat of its
// own /proc status and mounts) and reports what it saw as protections: the
// launcher's work observed, not inferred. uid is the daemon's.
func (s *Sandbox) Probe(trees *proctree.Manager, profile string, uid int) ([]Protection, error) {
	if p, ok := s.Profile(profile); !ok || p.Off {
		return nil, nil
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	dir, err := os.MkdirTemp("", "vcpnode-probe-")
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	defer os.RemoveAll(dir)
	r, err := s.Wrap(Command{Tool: "sandbox check", Kind: "probe", Profile: profile, Path: cat,
		Args: []string{"cat", "/proc/self/status", "/proc/self/mountinfo", "/proc/1/cmdline"}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	proc, tree, err := r.StartProcess(trees, &os.ProcAttr{Dir: dir, Files: []*os.File{nil, pw, nil}})
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("probe: %w", err)
	}
	out, _ := io.ReadAll(pr)
	pr.Close()
	_, _ = proc.Wait()
	_ = tree.KillAndWait(5e9)
	tree.Release()
	status, mounts := readProbe(out)
	own, _ := os.ReadFile("/proc/self/status")
	ownMounts, _ := os.ReadFile("/proc/self/mountinfo")
	ownStatus, _ := readProbe(own)
	_, mine := readProbe(ownMounts)

	var ps []Protection
	seen := func(name string, ok bool, detail string) {
		st := StateNotEnforced
		if ok {
			st = StateEnforced
		}
		ps = append(ps, Protection{Name: "probe: " + name, State: st, Needs: "a command started under the profile", Detail: detail})
	}
	noCaps := status["CapEff"] == 0 && status["CapPrm"] == 0 && status["CapInh"] == 0 && status["CapAmb"] == 0
	if uid == 0 {
		noCaps = noCaps && status["CapBnd"] == 0
	}
	seen("no capabilities", noCaps, fmt.Sprintf("CapEff %x CapPrm %x CapBnd %x", status["CapEff"], status["CapPrm"], status["CapBnd"]))
	seen("no_new_privs", status["NoNewPrivs"] == 1, "")
	if s.caps.Seccomp {
		seen("syscall filter", status["Seccomp"] == 2, fmt.Sprintf("Seccomp %d, filters %d", status["Seccomp"], status["Seccomp_filters"]))
	}
	if uid == 0 || s.caps.UserNS {
		seen("capability bounding set empty", status["CapBnd"] == 0, fmt.Sprintf("CapBnd %x", status["CapBnd"]))
	}
	// The launcher's init as PID 1 and the command as PID 2 (its /proc
	// shows the namespace's pids only), and a /proc and a /dev/shm of its
	// own mounted over the machine's.
	init := strings.Contains(string(out), "\n"+launchArg0+"\x00")
	seen("a PID namespace of its own", init && status["Pid"] == 2,
		fmt.Sprintf("pid %d, PID 1 the launcher's init: %t; the daemon is pid %d", status["Pid"], init, ownStatus["Pid"]))
	for _, dir := range []string{"/proc", "/dev/shm"} {
		seen("a "+dir+" of its own", mounts[dir] > mine[dir], fmt.Sprintf("%d mounts on %s, the daemon sees %d", mounts[dir], dir, mine[dir]))
	}
	return ps, nil
}

// readProbe reads the numbers of a /proc/PID/status and counts the mounts
// on each mount point of a mountinfo.
func readProbe(out []byte) (status map[string]uint64, mounts map[string]int) {
	status, mounts = map[string]uint64{}, map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ":\t"); ok {
			base := 10
			if strings.HasPrefix(k, "Cap") {
				base = 16
			}
			var n uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), map[int]string{10: "%d", 16: "%x"}[base], &n); err == nil {
				status[k] = n
			}
			continue
		}
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], "/") {
			mounts[f[4]]++
		}
	}
	return status, mounts
}
