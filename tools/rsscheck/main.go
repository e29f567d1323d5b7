// Command rsscheck measures the resident memory of an idle node with many
// tools registered (Linux only: it reads /proc).
//
// The parent process runs the fake hub; the node runs alone in a child
// process (this same binary, re-executed with -child), so the number is the
// node's own memory, not the hub's. The parent waits until the node has
// registered every tool, asks the child to collect garbage and return freed
// memory to the OS, lets it sit idle, and reads VmRSS from /proc/<pid>/status.
//
// With -binary PATH it measures a built vcpnode daemon instead (`PATH run`
// with a generated config): the whole program, cobra and all, but with only
// the tools that binary registers by itself, and without a forced GC.
//
//	go run ./tools/rsscheck               # node package, 50 in-process tools
//	go run ./tools/rsscheck -binary /tmp/vcpnode
//	go run ./tools/rsscheck -binary /tmp/before,/tmp/after -rounds 5   # alternately, with start→registered
//	go run ./tools/rsscheck -binary /tmp/vcpnode-with-symbols -residency   # what of the file is resident, per section and package
//	go run ./tools/rsscheck -frames 10,50,90   # peak memory per large execute_tool
//	go run ./tools/rsscheck -files 64 -memlimit 20971520   # serving 64 files of 1 MiB at once
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/demohub"
	"github.com/vcpnode/vcpnode/wsproto"
)

// The child learns where the hub is from the environment; the key travels as
// VCPNODE_KEY, as it would for the daemon.
const (
	envHubURL = "RSSCHECK_HUB_URL"
	envKey    = "VCPNODE_KEY"
	// measureKey is a throwaway key for the loopback fake hub.
	measureKey = "rsscheck-key_0123456789"
	// settleLine asks the child to collect garbage and report its runtime stats.
	settleLine = "settle"
)

func main() {
	child := flag.Bool("child", false, "internal: run the node side (started by the parent)")
	tools := flag.Int("tools", 50, "how many in-process tools the node registers")
	idle := flag.Duration("idle", 3*time.Second, "how long the node sits idle before the final reading")
	binary := flag.String("binary", "", "measure this vcpnode binary (`run` with a generated config) instead of the node package; several, comma-separated, are compared")
	detail := flag.Bool("residency", false, "with one -binary: also show what of its file is resident, per section and (unless built with -s) per package, and its largest mappings")
	rounds := flag.Int("rounds", 1, "with -binary: run each binary this many times, alternately")
	frames := flag.String("frames", "", "measure peak memory while the node takes one execute_tool of each size, in MiB (e.g. 10,50,90)")
	sink := flag.Bool("sink", false, "internal: the child also registers the Sink tool (with -frames)")
	files := flag.Int("files", 0, "measure memory while the node serves this many files at once, then idles (-idle, default 30s here)")
	fileSize := flag.Int("filesize", 1<<20, "size of each file for -files, in bytes")
	memLimit := flag.Int64("memlimit", 0, "node.memory_limit for the node (-files); internal for the child")
	childFiles := flag.String("childfiles", "", "internal: the child serves files from this root")
	concurrent := flag.Int("concurrent", 0, "internal: the child's node.max_concurrent")
	flag.Parse()

	var err error
	switch {
	case *child:
		err = runChild(childOptions{tools: *tools, sink: *sink, filesRoot: *childFiles, memLimit: *memLimit, concurrent: *concurrent})
	case *files > 0:
		if !flagSet("idle") {
			*idle = 30 * time.Second
		}
		err = measureFiles(*files, *fileSize, *memLimit, *idle)
	case *frames != "":
		var sizes []int
		if sizes, err = parseSizes(*frames); err == nil {
			err = measureFrames(sizes)
		}
	case *binary != "" && (strings.Contains(*binary, ",") || *rounds > 1):
		err = compareBinaries(strings.Split(*binary, ","), max(*rounds, 1), *idle)
	case *binary != "":
		err = measureBinary(*binary, *idle, *detail)
	default:
		err = measurePackage(*tools, *idle)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rsscheck:", err)
		os.Exit(1)
	}
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// child is the node running in a process of its own.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *strings.Builder
	stop   func() error // EOF on stdin, then wait (kill after 30 s)
}

// startChild re-runs this program as the node, connected to hub.
func startChild(hub *demohub.Hub, args ...string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this program to re-run it as the node: %w", err)
	}
	cmd := exec.Command(self, append([]string{"-child"}, args...)...)
	cmd.Env = append(os.Environ(), envHubURL+"="+hub.BaseURL(), envKey+"="+measureKey)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the node process: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // stdout is read by the caller, before Wait can close it
	stop := func() error {
		stdin.Close() // EOF on stdin tells the child to shut down gracefully
		select {
		case err := <-exited:
			return err
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			return errors.New("the node process did not exit within 30s of being told to")
		}
	}
	return &child{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), stderr: stderr, stop: stop}, nil
}

// measurePackage runs the node package with n in-process tools in a child.
func measurePackage(n int, idle time.Duration) error {
	title := fmt.Sprintf("node package, %d in-process tools registered", n)
	return inChild(title, []string{"-tools", fmt.Sprint(n)}, func(hub *demohub.Hub, c *child) (string, error) {
		return measureChild(hub, c.cmd.Process.Pid, n, idle, c.stdin, c.stdout)
	})
}

// inChild starts a node in its own process with args, connected to a fresh
// fake hub, has measure read it, stops it, and prints the report under title.
func inChild(title string, args []string, measure func(*demohub.Hub, *child) (string, error)) error {
	hub, err := demohub.Start(demohub.Options{Key: measureKey, NoHistory: true})
	if err != nil {
		return err
	}
	defer hub.Close()
	c, err := startChild(hub, args...)
	if err != nil {
		return err
	}
	report, err := measure(hub, c)
	if stopErr := c.stop(); err == nil && stopErr != nil {
		err = fmt.Errorf("node process: %w", stopErr)
	}
	if err != nil {
		return fmt.Errorf("%w\nnode process stderr:\n%s", err, c.stderr.String())
	}
	fmt.Printf("%s, measured in its own process (pid %d)\n", title, c.cmd.Process.Pid)
	fmt.Print(report)
	return nil
}

// registered waits for the node to connect and send register_tools.
func registered(ctx context.Context, hub *demohub.Hub) (*demohub.Conn, wsproto.Message, error) {
	conn, err := hub.Accept(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("the node never connected: %w", err)
	}
	msg, err := conn.WaitType(ctx, wsproto.TypeRegisterTools)
	if err != nil {
		return nil, nil, fmt.Errorf("the node never registered its tools: %w", err)
	}
	return conn, msg, nil
}

// resetPeak resets the process's peak resident memory (VmHWM).
func resetPeak(pid int) error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("reset the peak resident memory (Linux only): %w", err)
	}
	return nil
}

// measureChild waits for the child's registration, settles it, idles, and
// returns the readings as text.
func measureChild(hub *demohub.Hub, pid, n int, idle time.Duration, stdin io.Writer, stdout *bufio.Reader) (string, error) {
	if _, err := waitRegistered(hub, n); err != nil {
		return "", err
	}
	if _, err := fmt.Fprintln(stdin, settleLine); err != nil {
		return "", fmt.Errorf("ask the node to settle: %w", err)
	}
	stats, err := stdout.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read the node's runtime stats: %w", err)
	}
	afterGC, err := readProcStatus(pid)
	if err != nil {
		return "", err
	}
	// A measurement, not a synchronisation: the node is given time to do
	// whatever an idle node does (timers, background scavenging).
	time.Sleep(idle)
	idleStatus, err := readProcStatus(pid)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  after GC + FreeOSMemory: %s\n", afterGC)
	fmt.Fprintf(&b, "  after %s idle:          %s\n", idle, idleStatus)
	fmt.Fprintf(&b, "  go runtime (after GC):   %s", stats)
	fmt.Fprintf(&b, "VmRSS idle: %.1f MiB\n", mib(idleStatus.RSS))
	return b.String(), nil
}

// waitRegistered waits for the node to connect and send register_tools
// with want tools (want < 0: any number), and returns how many it sent.
func waitRegistered(hub *demohub.Hub, want int) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, msg, err := registered(ctx, hub)
	if err != nil {
		return 0, err
	}
	rt, ok := msg.(wsproto.RegisterTools)
	if !ok {
		return 0, fmt.Errorf("register_tools decoded as %T", msg)
	}
	if want >= 0 && len(rt.Tools) != want {
		return 0, fmt.Errorf("the node registered %d tools, want %d", len(rt.Tools), want)
	}
	return len(rt.Tools), nil
}

func mib(bytes int64) float64 { return float64(bytes) / (1 << 20) }
