//go:build linux

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"

	"github.com/vcpnode/vcpnode/demohub"
)

// rig is everything one soak run starts: the fake hub, the proxy in front
// of it, the daemon and the files they use, all under one temporary
// directory and on loopback.
type rig struct {
	opts  options
	dir   string
	key   string
	self  string // this program: the plugins and the MCP server
	bin   string // vcpnode
	nodeJ string // Node.js, or "" without it

	rec   *recorder
	hub   *demohub.Hub
	proxy *toxiproxy.Proxy

	configPath  string
	stateDir    string
	asyncDir    string
	filesDir    string
	metricsAddr string
	logPath     string
	private     bool   // the daemon runs in a private mount namespace with a tmpfs state dir
	privateSkip string // why not, when private is false
	cgroupDir   string
	cgroupV1    bool // cgroupDir is in a v1 memory hierarchy
	// memLimitHits and memOOMKills add up, over the memory-pressure
	// faults on v1, memory.failcnt and the OOM kills in the daemon's group.
	memLimitHits, memOOMKills atomic.Int64
	cgroupSkip                string // why there is no memory pressure, or ""
	version                   int    // of the config, for valid reloads

	cmd     *exec.Cmd
	pid     int
	exited  chan struct{}
	exitErr error
	logMu   sync.Mutex
	logFile *os.File

	acceptDone chan struct{}
}

// files served to internal_request_file: name → size.
var soakFiles = map[string]int{"small.txt": 1 << 10, "medium.bin": 64 << 10, "large.bin": 1 << 20}

func newRig(ctx context.Context, o options, rec *recorder) (*rig, error) {
	dir, err := os.MkdirTemp("", "vcpnode-soak-")
	if err != nil {
		return nil, err
	}
	r := &rig{opts: o, dir: dir, rec: rec, exited: make(chan struct{})}
	r.key = "soak-" + randomHex(12)
	if r.self, err = os.Executable(); err != nil {
		return r, fmt.Errorf("find this program to run it as the plugins: %w", err)
	}
	if r.bin, err = r.vcpnodeBinary(ctx); err != nil {
		return r, err
	}
	rec.start = time.Now() // the history starts once the build is done
	if p, err := exec.LookPath("node"); err == nil {
		r.nodeJ = p
	}
	for _, d := range []string{"home", "run", "tmp", "state", "async", "files"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return r, err
		}
	}
	r.stateDir, r.asyncDir, r.filesDir = filepath.Join(dir, "state"), filepath.Join(dir, "async"), filepath.Join(dir, "files")
	for name, size := range soakFiles {
		if err := os.WriteFile(filepath.Join(r.filesDir, name), fileContent(name, size), 0o600); err != nil {
			return r, err
		}
	}
	if err := r.writePlugins(); err != nil {
		return r, err
	}
	if r.hub, err = demohub.Start(demohub.Options{Key: r.key, NoHistory: true, OnFrame: rec.frame}); err != nil {
		return r, err
	}
	r.acceptDone = make(chan struct{})
	go r.acceptLoop()
	if err := r.startProxy(); err != nil {
		return r, err
	}
	if r.metricsAddr, err = freeLoopbackAddr(); err != nil {
		return r, err
	}
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte(r.key+"\n"), 0o600); err != nil {
		return r, err
	}
	r.configPath = filepath.Join(dir, "vcpnode.toml")
	if err := os.WriteFile(r.configPath, []byte(r.config(0)), 0o600); err != nil {
		return r, err
	}
	return r, r.startDaemon()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// fileContent is a file's deterministic content, so a served file can be checked.
func fileContent(name string, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*7 + len(name))
	}
	return b
}

// vcpnodeBinary builds the daemon from this module, unless -binary names one.
func (r *rig) vcpnodeBinary(ctx context.Context) (string, error) {
	if r.opts.binary != "" {
		return filepath.Abs(r.opts.binary)
	}
	return buildVCPNode(ctx, r.dir)
}

// buildVCPNode builds ./cmd/vcpnode of the module the soak runs in, into
// dir, with the build tags given.
func buildVCPNode(ctx context.Context, dir string, tags ...string) (string, error) {
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("find the module to build vcpnode: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	bin := filepath.Join(dir, "vcpnode")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", strings.Join(tags, ","), "-o", bin, "./cmd/vcpnode")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/vcpnode: %w\n%s", err, out)
	}
	return bin, nil
}

func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startProxy puts toxiproxy between the node and the hub, on loopback.
func (r *rig) startProxy() error {
	// Its toxics log through zerolog's global logger; the soak prints its own report.
	zerolog.SetGlobalLevel(zerolog.Disabled)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "hub", "127.0.0.1:0", r.hub.Addr())
	if err := p.Start(); err != nil {
		return fmt.Errorf("start the proxy: %w", err)
	}
	r.proxy = p
	return nil
}

// acceptLoop records every connection's end in the history.
func (r *rig) acceptLoop() {
	defer close(r.acceptDone)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := r.hub.Accept(context.Background())
		if err != nil {
			return // the hub closed
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-c.Done()
			r.rec.connEnded(c.ID(), c.Err())
		}()
	}
}

func q(s string) string { return strconv.Quote(s) }

// config is the daemon's configuration; version changes a placeholder value
// so that a valid reload has something to apply.
func (r *rig) config(version int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[hub]\nurl = %s\nkey_file = %s\nname = \"soak\"\nping_interval = \"2s\"\npong_timeout = \"5s\"\nhandshake_timeout = \"5s\"\n\n",
		q("http://"+r.proxy.Listen), q(filepath.Join(r.dir, "key")))
	fmt.Fprintf(&b, "[node]\nmax_concurrent = 8\nqueue = 64\nshutdown_grace = \"5s\"\n\n")
	fmt.Fprintf(&b, "[files]\nroots = [%s]\n\n", q(r.filesDir))
	fmt.Fprintf(&b, "[log]\nlevel = \"info\"\nformat = \"json\"\n\n")
	fmt.Fprintf(&b, "[control]\nsocket = %s\n\n", q(filepath.Join(r.dir, "run", "vcpnode.sock")))
	fmt.Fprintf(&b, "[metrics]\nlisten = %s\n\n", q(r.metricsAddr))
	fmt.Fprintf(&b, "[plugins]\ndirs = [%s]\nstate_dir = %s\nwatch = false\nasync_max_runtime = \"2m\"\n", q(filepath.Join(r.dir, "Plugin")), q(r.stateDir))
	if r.nodeJ != "" {
		fmt.Fprintf(&b, "node = %s\n", q(r.nodeJ))
	}
	// The plugins run confined, as any user's would: the soak's profile adds
	// this program (the plugins' executable) and the async plugin's drop box.
	fmt.Fprintf(&b, "\n[sandbox]\nprofile = \"soak\"\n[sandbox.profiles.soak]\nextends = \"default\"\nread = [%s]\nwrite = [%s]\n",
		q(filepath.Dir(r.self)), q(r.asyncDir))
	fmt.Fprintf(&b, "\n[placeholders.values]\nSoakVersion = \"v%d\"\n\n", version)
	fmt.Fprintf(&b, "[mcp.servers.soak]\ncommand = %s\nargs = [%q]\ntimeout = \"%s\"\n\n", q(r.self), modeMCP, r.opts.callTimeout)
	for _, tool := range []string{"SoakSync", "SoakAsync"} {
		fmt.Fprintf(&b, "[tools.%s]\ntimeout = \"%s\"\n\n", tool, r.opts.callTimeout)
	}
	return b.String()
}

// invalidConfig is refused by validation; the daemon must keep its config.
const invalidConfig = "[node]\nmax_concurrent = 0\nqueue = -1\n"

// writePlugins lays out the plugin folder: sync, async, static, and a
// direct plugin when Node.js is there.
func (r *rig) writePlugins() error {
	sh := func(args ...string) string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		return strings.Join(out, " ")
	}
	plugins := map[string]string{
		"SoakSync": fmt.Sprintf(`{"manifestVersion":"1.0.0","name":"SoakSync","displayName":"Soak sync","version":"1.0.0","description":"Echoes a digest, or hangs.",
"pluginType":"synchronous","entryPoint":{"type":"command","command":%s},"communication":{"protocol":"stdio","timeout":60000},
"capabilities":{"invocationCommands":[{"command":"echo","description":"Echo a digest of payload."},{"command":"hang","description":"Never answer."}]}}`,
			q(sh(r.self, modeSync))),
		"SoakAsync": fmt.Sprintf(`{"manifestVersion":"1.0.0","name":"SoakAsync","displayName":"Soak async","version":"1.0.0","description":"Answers at once, calls back later.",
"pluginType":"asynchronous","entryPoint":{"type":"command","command":%s},"communication":{"protocol":"stdio","timeout":60000},
"capabilities":{"invocationCommands":[{"command":"submit","description":"Submit a task."}]}}`,
			q(sh(r.self, modeAsync, r.asyncDir))),
		"SoakStatic": fmt.Sprintf(`{"manifestVersion":"1.0.0","name":"SoakStatic","displayName":"Soak static","version":"1.0.0","description":"A placeholder.",
"pluginType":"static","entryPoint":{"type":"command","command":%s},"communication":{"protocol":"stdio","timeout":10000},
"refreshIntervalCron":"*/15 * * * * *","capabilities":{"systemPromptPlaceholders":[{"placeholder":"{{SoakStatic}}","description":"A value."}]}}`,
			q(sh(r.self, modeStatic))),
	}
	if r.nodeJ != "" {
		plugins["SoakDirect"] = `{"manifestVersion":"1.0.0","name":"SoakDirect","displayName":"Soak direct","version":"1.0.0","description":"Echoes n.",
"pluginType":"hybridservice","entryPoint":{"script":"index.js"},"communication":{"protocol":"direct","timeout":60000},
"capabilities":{"invocationCommands":[{"command":"echo","description":"Echo n."}]}}`
	}
	for name, manifest := range plugins {
		d := filepath.Join(r.dir, "Plugin", name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(d, "plugin-manifest.json"), []byte(manifest), 0o600); err != nil {
			return err
		}
	}
	if r.nodeJ != "" {
		js := "module.exports = { processToolCall: async (args) => ({ content: [{ type: 'text', text: 'direct ' + args.n }] }) };\n"
		return os.WriteFile(filepath.Join(r.dir, "Plugin", "SoakDirect", "index.js"), []byte(js), 0o600)
	}
	return nil
}

// startDaemon runs `vcpnode run`. As root it runs in a private mount
// namespace whose state directory is a small tmpfs, so the disk-full fault
// fills only that, and in a memory cgroup of its own.
func (r *rig) startDaemon() error {
	args := []string{r.bin, "run", "--config", r.configPath}
	script := `mount -t tmpfs -o size=4m,mode=0700 vcpnode-soak "$0" && exec "$@"`
	switch unshare, err := exec.LookPath("unshare"); {
	case os.Geteuid() != 0 || !r.opts.privileged:
		r.privateSkip = "needs root: the outbox's small tmpfs lives in a private mount namespace"
	case err != nil:
		r.privateSkip = "no unshare command for a private mount namespace"
	default:
		// A root without CAP_SYS_ADMIN (some containers) cannot; ask first.
		probe := exec.Command(unshare, "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, r.stateDir, "true")
		if out, err := probe.CombinedOutput(); err != nil {
			r.privateSkip = fmt.Sprintf("a private mount namespace with a tmpfs is not permitted here: %v %s", err, strings.TrimSpace(string(out)))
			break
		}
		args = append([]string{unshare, "--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, r.stateDir}, args...)
		r.private = true
	}
	r.cgroupSkip = r.setupCgroup()
	args = r.joinCgroup(args)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(r.dir, "home"),
		"XDG_RUNTIME_DIR=" + filepath.Join(r.dir, "run"),
		"TMPDIR=" + filepath.Join(r.dir, "tmp"),
		"LANG=C.UTF-8",
	}
	cmd.Env = append(cmd.Env, r.opts.daemonEnv...)
	cmd.Dir = r.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var err error
	r.logPath = filepath.Join(r.dir, "daemon.log")
	if r.logFile, err = os.Create(r.logPath); err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = r.logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start vcpnode: %w", err)
	}
	r.cmd, r.pid = cmd, cmd.Process.Pid
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		r.copyLog(stderr)
	}()
	go func() {
		<-copied
		r.exitErr = cmd.Wait()
		close(r.exited)
	}()
	return nil
}

// copyLog writes the daemon's log to its file and checks every line for the key.
func (r *rig) copyLog(from io.Reader) {
	sc := bufio.NewScanner(from)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		r.logMu.Lock()
		fmt.Fprintln(r.logFile, line)
		r.logMu.Unlock()
		if strings.Contains(line, r.key) {
			r.rec.violate("the key appears in a daemon log line: "+strings.ReplaceAll(line, r.key, "<KEY>"), "", "")
		}
		if strings.Contains(line, "reload") {
			r.rec.note("daemon-log", "", "", clipText(line))
		}
	}
}

// daemonAlive reports an error once the daemon has exited.
func (r *rig) daemonAlive() error {
	select {
	case <-r.exited:
		return fmt.Errorf("vcpnode exited: %v", r.exitErr)
	default:
		return nil
	}
}

// close stops the daemon (SIGTERM, then SIGKILL), the proxy and the hub,
// and removes the directory unless keep is set.
func (r *rig) close(keep bool) error {
	var errs []error
	if r.cmd != nil {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(30 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.exited
			errs = append(errs, errors.New("vcpnode did not stop within 30s of SIGTERM"))
		}
		r.logFile.Close()
	}
	r.removeCgroup()
	if r.proxy != nil {
		r.proxy.Stop()
	}
	if r.hub != nil {
		r.hub.Close()
		<-r.acceptDone
	}
	if !keep && r.dir != "" {
		if err := os.RemoveAll(r.dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
