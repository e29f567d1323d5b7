//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// sample is the daemon's resources at one moment.
type sample struct {
	RSS        int64 // bytes
	Files      int
	Goroutines int // -1 when the metrics could not be read
	Children   int // processes below the daemon but idle waiting launchers
	Runs       int // of those, runs of the soak's stdio plugins (calls, async workers, static refreshes)
}

func (s sample) String() string {
	return fmt.Sprintf("rss %.1f MiB, %d open files, %d goroutines, %d child processes", mib(s.RSS), s.Files, s.Goroutines, s.Children)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// margins state how far above the baseline the daemon may be once a fault
// has cleared and its calls are done.
type margins struct {
	rss        int64
	files      int
	goroutines int
	children   int
}

var defaultMargins = margins{rss: 64 << 20, files: 16, goroutines: 40, children: 0}

func (m margins) String() string {
	return fmt.Sprintf("rss +%.0f MiB, open files +%d, goroutines +%d, child processes +%d", mib(m.rss), m.files, m.goroutines, m.children)
}

// within reports what of s exceeds base plus m.
func (m margins) within(base, s sample) []string {
	var over []string
	if s.RSS > base.RSS+m.rss {
		over = append(over, fmt.Sprintf("rss %.1f MiB > %.1f + %.0f", mib(s.RSS), mib(base.RSS), mib(m.rss)))
	}
	if s.Files > base.Files+m.files {
		over = append(over, fmt.Sprintf("open files %d > %d + %d", s.Files, base.Files, m.files))
	}
	if base.Goroutines >= 0 && s.Goroutines > base.Goroutines+m.goroutines {
		over = append(over, fmt.Sprintf("goroutines %d > %d + %d", s.Goroutines, base.Goroutines, m.goroutines))
	}
	if s.Children > base.Children+m.children {
		over = append(over, fmt.Sprintf("child processes %d > %d + %d", s.Children, base.Children, m.children))
	}
	return over
}

func (r *rig) sample() (sample, error) {
	s := sample{Goroutines: -1}
	rss, err := procStatusBytes(r.pid, "VmRSS")
	if err != nil {
		return s, err
	}
	s.RSS = rss
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", r.pid))
	if err != nil {
		return s, fmt.Errorf("list the daemon's open files: %w", err)
	}
	s.Files = len(fds)
	w := working(r.pid)
	s.Children, s.Runs = len(w), pluginRuns(w)
	if g, err := r.goroutines(); err == nil {
		s.Goroutines = g
	}
	return s, nil
}

// procStatusBytes reads a kB field of /proc/PID/status (VmRSS, VmHWM).
func procStatusBytes(pid int, field string) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read the daemon's status: %w", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// metricsClient keeps no idle connection: they would count as the
// daemon's open files.
var metricsClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

// goroutines reads go_goroutines from the daemon's metrics endpoint.
func (r *rig) goroutines() (int, error) {
	resp, err := metricsClient.Get("http://" + r.metricsAddr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("no go_goroutines in the metrics")
}

// descendants lists the processes below pid (any depth), from /proc.
func descendants(pid int) []int {
	return descendantsIn(parents(), pid)
}

// descendantsIn lists the processes below pid in parent (parents).
func descendantsIn(parent map[int]int, pid int) []int {
	var out []int
	for p := range parent {
		if below(parent, p, pid) {
			out = append(out, p)
		}
	}
	return out
}

// parents maps every live process of /proc to its parent.
func parents() map[int]int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := string(stat)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
		f := strings.Fields(rest)
		if len(f) < 2 || f[0] == "Z" {
			continue // zombies hold nothing but a pid until reaped
		}
		ppid, _ := strconv.Atoi(f[1])
		parent[p] = ppid
	}
	return parent
}

// below reports whether p is a descendant of pid.
func below(parent map[int]int, p, pid int) bool {
	for a, hops := parent[p], 0; a > 1 && hops < 64; a, hops = parent[a], hops+1 {
		if a == pid {
			return true
		}
	}
	return false
}

// waitingLauncher is how a launcher waiting for a call shows in /proc, and
// its namespace's init, a fork of it.
const waitingLauncher = "vcpnode-sandbox-launch wait "

// working lists the processes below pid but the launchers waiting for a
// call with nothing under them but their init: the daemon keeps up to two
// ready, as many as its calls come, and ends them after a minute without
// one, so they are not what a call left behind. A waiting launcher that
// took a call keeps its argv and counts, with what it runs.
func working(pid int) []int {
	parent := parents()
	all := descendantsIn(parent, pid)
	idle := map[int]bool{}
	for _, p := range all {
		if strings.HasPrefix(cmdline(p), waitingLauncher) {
			idle[p] = true
		}
	}
	for _, p := range all {
		if idle[p] {
			continue
		}
		for a := parent[p]; a != pid && a > 1; a = parent[a] {
			delete(idle, a) // it serves a call
		}
	}
	var out []int
	for _, p := range all {
		if !idle[p] {
			out = append(out, p)
		}
	}
	return out
}

func cmdline(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "?"
	}
	s := strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	return clipText(s)
}

// pluginRuns counts the processes of pids that run one of the soak's stdio
// plugins (this program in a plugin mode).
func pluginRuns(pids []int) int {
	n := 0
	for _, p := range pids {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		if args := strings.Split(string(b), "\x00"); len(args) > 1 {
			switch args[1] {
			case modeSync, modeAsync, modeStatic:
				n++
			}
		}
	}
	return n
}
