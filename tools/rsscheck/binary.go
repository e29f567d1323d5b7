package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vcpnode/vcpnode/demohub"
)

// binaryRun is one run of a vcpnode binary against the fake hub.
type binaryRun struct {
	status     procStatus    // after registering and sitting idle
	residency  string        // with -residency: what of the file and memory is resident
	registered time.Duration // from starting the process to register_tools at the hub
	tools      int
	pid        int
}

// measureBinary runs `bin run` against the fake hub and reads its resident
// memory once it has registered its tools and sat idle. The daemon is not
// asked to collect garbage: this is what an idle daemon actually holds.
func measureBinary(bin string, idle time.Duration, detail bool) error {
	r, err := runBinary(bin, idle, detail)
	if err != nil {
		return err
	}
	size := "unknown size"
	if fi, err := os.Stat(bin); err == nil {
		size = fmt.Sprintf("%.1f MiB on disk", mib(fi.Size()))
	}
	fmt.Printf("binary %s (%s), %d tools registered %s after start, pid %d\n", bin, size, r.tools, r.registered.Round(time.Millisecond), r.pid)
	fmt.Printf("  after %s idle: %s\n", idle, r.status)
	fmt.Print(r.residency)
	fmt.Printf("VmRSS idle: %.1f MiB\n", mib(r.status.RSS))
	return nil
}

func runBinary(bin string, idle time.Duration, detail bool) (binaryRun, error) {
	hub, err := demohub.Start(demohub.Options{Key: measureKey, NoHistory: true})
	if err != nil {
		return binaryRun{}, err
	}
	defer hub.Close()

	dir, err := os.MkdirTemp("", "rsscheck-")
	if err != nil {
		return binaryRun{}, err
	}
	defer os.RemoveAll(dir)
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(measureKey+"\n"), 0o600); err != nil {
		return binaryRun{}, err
	}
	// Its own control socket: as root the default is the system's
	// (/run/vcpnode), which a running service may own.
	config := fmt.Sprintf("[hub]\nurl = %q\nkey_file = %q\nname = \"rsscheck-binary\"\n\n[log]\nlevel = \"info\"\nformat = \"json\"\n\n[control]\nsocket = %q\n",
		hub.BaseURL(), keyFile, filepath.Join(dir, "vcpnode.sock"))
	configFile := filepath.Join(dir, "vcpnode.toml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		return binaryRun{}, err
	}

	cmd := exec.Command(bin, "run", "--config", configFile)
	// Keep the key file authoritative and any runtime files inside dir.
	cmd.Env = append(withoutEnv(os.Environ(), envKey), "XDG_RUNTIME_DIR="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return binaryRun{}, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	r := binaryRun{pid: cmd.Process.Pid}
	r.tools, err = waitRegistered(hub, -1)
	r.registered = time.Since(started)
	if err == nil {
		time.Sleep(idle) // a measurement: let the daemon settle into its idle state
		r.status, err = readProcStatus(r.pid)
	}
	if err == nil && detail {
		r.residency, err = describeResidency(r.pid, bin)
	}
	if stopErr := stopGracefully(cmd.Process, exited); err == nil && stopErr != nil {
		err = stopErr
	}
	if err != nil {
		return binaryRun{}, fmt.Errorf("%w\n%s stderr:\n%s", err, bin, stderr.String())
	}
	return r, nil
}

// stopGracefully sends SIGTERM, as systemd would, and waits for the exit.
func stopGracefully(p *os.Process, exited <-chan error) error {
	if err := p.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop the daemon: %w", err)
	}
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("daemon exited badly after SIGTERM: %w", err)
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = p.Kill()
		return errors.New("the daemon did not exit within 30s of SIGTERM")
	}
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// describeResidency reads, of the running binary, what of its file is
// resident (per section and package) and which mappings hold memory.
func describeResidency(pid int, bin string) (string, error) {
	files, err := residency(pid, bin)
	if err != nil {
		return "", err
	}
	maps, err := mappings(pid)
	if err != nil {
		return "", err
	}
	return files + "  mappings with 64 KiB or more resident:\n" + maps, nil
}
