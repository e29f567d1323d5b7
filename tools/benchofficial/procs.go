package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is a process this program started, its output in a log file.
type proc struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

func startProc(name, log string, cmd *exec.Cmd) (*proc, error) {
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	if cmd.Stdout == nil {
		cmd.Stdout = f
	}
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: log, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(p.exited)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM, as a service manager would, and kills after 15 s.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// logTail is the end of the process's output, for error messages.
func (p *proc) logTail() string {
	data, _ := os.ReadFile(p.log)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	// The key is a throwaway, but no key is printed.
	return strings.ReplaceAll(string(data), benchKey, "***")
}

// nodeProc is a node under measurement; server is the serverName it
// registers with.
type nodeProc struct {
	*proc
	server string
}

// nodeEnv puts the chosen python3 first on PATH for both nodes (their
// plugins run "python3 bench.py").
func nodeEnv(o options) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "VCPNODE_KEY=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+filepath.Dir(o.python)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func startVcpnode(_ context.Context, w workdir, o options, hubPort int) (*nodeProc, error) {
	if err := setHubPort(w.vcpnodeConfig, hubPort); err != nil {
		return nil, err
	}
	dir := filepath.Dir(w.vcpnodeConfig)
	cmd := exec.Command(o.vcpnode, "run", "--config", w.vcpnodeConfig)
	cmd.Dir = dir
	cmd.Env = append(nodeEnv(o), "XDG_RUNTIME_DIR="+dir, "HOME="+dir)
	p, err := startProc("vcpnode", filepath.Join(dir, "vcpnode.log"), cmd)
	return &nodeProc{p, "vcpnode-bench"}, err
}

func startOfficial(_ context.Context, w workdir, o options, hubPort int) (*nodeProc, error) {
	if err := setHubPort(filepath.Join(w.official, "config.env"), hubPort); err != nil {
		return nil, err
	}
	cmd := exec.Command("node", "official.js")
	cmd.Dir = w.official
	cmd.Env = nodeEnv(o)
	p, err := startProc("official", filepath.Join(w.official, "official.log"), cmd)
	return &nodeProc{p, "official-bench"}, err
}

// startHub runs hub.js and reads the line with its two ports.
func startHub(ctx context.Context, w workdir, o options) (*hubClient, error) {
	cmd := exec.Command("node", filepath.Base(w.hubJS))
	cmd.Dir = filepath.Dir(w.hubJS)
	cmd.Env = append(os.Environ(), "BENCH_KEY="+benchKey, "BENCH_TOOLBOX="+o.toolbox,
		"NODE_PATH="+filepath.Join(o.official, "node_modules"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p, err := startProc("server", filepath.Join(filepath.Dir(w.hubJS), "hub.log"), cmd)
	if err != nil {
		return nil, err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, out)
	}()
	var ports struct {
		HubPort, APIPort int
		Toolbox          bool
	}
	select {
	case line, ok := <-lines:
		if !ok {
			p.stop()
			return nil, fmt.Errorf("the server exited before listening:\n%s", p.logTail())
		}
		if err := json.Unmarshal([]byte(line), &ports); err != nil {
			p.stop()
			return nil, fmt.Errorf("the server's first line %q: %w", line, err)
		}
	case <-time.After(30 * time.Second):
		p.stop()
		return nil, errors.New("the server did not listen within 30s")
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
	return &hubClient{proc: p, hubPort: ports.HubPort, api: fmt.Sprintf("http://127.0.0.1:%d", ports.APIPort), toolbox: ports.Toolbox}, nil
}

// treeRSS is the resident memory of pid and all its descendants, in bytes.
func treeRSS(pid int) (int64, error) {
	pids, err := descendants(pid)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, p := range append(pids, pid) {
		v, err := statusField(p, "VmRSS")
		if err != nil {
			if p == pid {
				return 0, err
			}
			continue // a child that just exited
		}
		sum += v
	}
	return sum, nil
}

// descendants lists the processes below pid, from /proc's parent links.
func descendants(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		if ppid, ok := parsePPID(data); ok {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, children[p]...)
		queue = append(queue, children[p]...)
	}
	return out, nil
}

// parsePPID reads the parent pid from a /proc/PID/stat line: the fourth
// field, counted after the command name, which may hold spaces and ')'.
func parsePPID(stat []byte) (int, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	return ppid, err == nil
}

// statusField reads one "Name:   N kB" line of /proc/PID/status, in bytes.
func statusField(pid int, name string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status %s: %w", pid, name, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s line", pid, name)
}

// resetPeak restarts VmHWM of pid from its current RSS.
func resetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// cpuTime is the CPU time pid and the children it has reaped have used:
// utime, stime, cutime and cstime of /proc/PID/stat. Plugin processes have
// ended and been reaped by the node when a run is over, so a run's delta
// is the node's whole cost.
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseCPUTime(data)
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on Linux's
// common architectures.
const clockTicks = 100

func parseCPUTime(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no command name in /proc stat line")
	}
	// After the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 15 {
		return 0, errors.New("short /proc stat line")
	}
	var ticks int64
	for _, f := range fields[11:15] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat CPU field %q: %w", f, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
