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

	"github.com/vcpnode/vcpnode/internal/fakehub"
)

// measureBinary runs `bin run` against the fake hub and reads its resident
// memory once it has registered its tools and sat idle. The daemon is not
// asked to collect garbage: this is what an idle daemon actually holds.
func measureBinary(bin string, idle time.Duration) error {
	hub, err := fakehub.Start(fakehub.Options{Key: measureKey, NoHistory: true})
	if err != nil {
		return err
	}
	defer hub.Close()

	dir, err := os.MkdirTemp("", "rsscheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(measureKey+"\n"), 0o600); err != nil {
		return err
	}
	// Its own control socket: as root the default is the system's
	// (/run/vcpnode), which a running service may own.
	config := fmt.Sprintf("[hub]\nurl = %q\nkey_file = %q\nname = \"rsscheck-binary\"\n\n[log]\nlevel = \"info\"\nformat = \"json\"\n\n[control]\nsocket = %q\n",
		hub.BaseURL(), keyFile, filepath.Join(dir, "vcpnode.sock"))
	configFile := filepath.Join(dir, "vcpnode.toml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		return err
	}

	cmd := exec.Command(bin, "run", "--config", configFile)
	// Keep the key file authoritative and any runtime files inside dir.
	cmd.Env = append(withoutEnv(os.Environ(), envKey), "XDG_RUNTIME_DIR="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	status, registered, err := idleBinaryStatus(hub, cmd.Process.Pid, idle)
	if stopErr := stopGracefully(cmd.Process, exited); err == nil && stopErr != nil {
		err = stopErr
	}
	if err != nil {
		return fmt.Errorf("%w\n%s stderr:\n%s", err, bin, stderr.String())
	}
	size := "unknown size"
	if fi, err := os.Stat(bin); err == nil {
		size = fmt.Sprintf("%.1f MiB on disk", mib(fi.Size()))
	}
	fmt.Printf("binary %s (%s), %d tools registered, pid %d\n", bin, size, registered, cmd.Process.Pid)
	fmt.Printf("  after %s idle: %s\n", idle, status)
	fmt.Printf("VmRSS idle: %.1f MiB\n", mib(status.RSS))
	return nil
}

func idleBinaryStatus(hub *fakehub.Hub, pid int, idle time.Duration) (procStatus, int, error) {
	registered, err := waitRegistered(hub, -1)
	if err != nil {
		return procStatus{}, 0, err
	}
	time.Sleep(idle) // a measurement: let the daemon settle into its idle state
	status, err := readProcStatus(pid)
	return status, registered, err
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
