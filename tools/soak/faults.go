//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A fault is one kind of trouble: apply starts it and returns how to clear
// it (nil for instant faults such as a signal).
type fault struct {
	name     string
	blocks   bool // keeps the node from the hub while it lasts
	skip     string
	apply    func(*faultCtx) (clear func(), detail string, err error)
	disabled bool
}

type faultCtx struct {
	r   *rig
	d   *driver
	rng *rand.Rand
	n   int // the fault's number in the run, for toxic names
}

// toxic adds one toxiproxy toxic and returns its remover.
func (fc *faultCtx) toxic(kind, stream, attrs string) (func(), error) {
	name := fmt.Sprintf("%s-%s-%d", kind, stream, fc.n)
	js := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`, name, kind, stream, attrs)
	if _, err := fc.r.proxy.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
		return nil, fmt.Errorf("add toxic %s: %w", name, err)
	}
	return func() { _ = fc.r.proxy.Toxics.RemoveToxic(context.Background(), name) }, nil
}

// both adds the same toxic in both directions.
func (fc *faultCtx) both(kind, attrs string) (func(), error) {
	up, err := fc.toxic(kind, "upstream", attrs)
	if err != nil {
		return nil, err
	}
	down, err := fc.toxic(kind, "downstream", attrs)
	if err != nil {
		up()
		return nil, err
	}
	return func() { up(); down() }, nil
}

func faultKinds(r *rig) []*fault {
	fs := []*fault{
		{name: "latency", apply: func(fc *faultCtx) (func(), string, error) {
			lat, jit := 50+fc.rng.IntN(750), fc.rng.IntN(300)
			clear, err := fc.both("latency", fmt.Sprintf(`{"latency":%d,"jitter":%d}`, lat, jit))
			return clear, fmt.Sprintf("%d ms ± %d ms each way", lat, jit), err
		}},
		{name: "bandwidth", apply: func(fc *faultCtx) (func(), string, error) {
			rate := 128 << fc.rng.IntN(4) // KB/s
			clear, err := fc.both("bandwidth", fmt.Sprintf(`{"rate":%d}`, rate))
			return clear, fmt.Sprintf("%d KB/s each way", rate), err
		}},
		{name: "blackhole", blocks: true, apply: func(fc *faultCtx) (func(), string, error) {
			// timeout 0: nothing passes and the connection stays open; the
			// connection is closed when the toxic goes, so no byte it
			// swallowed can be mistaken for one that arrived.
			clear, err := fc.both("timeout", `{"timeout":0}`)
			return clear, "connections open, nothing through", err
		}},
		{name: "reset", blocks: true, apply: func(fc *faultCtx) (func(), string, error) {
			clear, err := fc.toxic("reset_peer", []string{"upstream", "downstream"}[fc.rng.IntN(2)], `{"timeout":0}`)
			return clear, "TCP reset at the next byte", err
		}},
		{name: "slicer", apply: func(fc *faultCtx) (func(), string, error) {
			size := 1 + fc.rng.IntN(64)
			clear, err := fc.both("slicer", fmt.Sprintf(`{"average_size":%d,"size_variation":%d,"delay":%d}`, size, size/2, fc.rng.IntN(200)))
			return clear, fmt.Sprintf("segments of about %d bytes", size), err
		}},
		{name: "hub-restart", blocks: true, apply: func(fc *faultCtx) (func(), string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			fc.r.hub.Stop(ctx)
			cancel()
			return func() {
				if err := fc.r.hub.Resume(); err != nil {
					fc.r.rec.violate("the hub could not listen again (soak setup): "+err.Error(), "", "")
				}
			}, "listener closed, connections closed without a code", nil
		}},
		{name: "hub-no-pong", apply: func(fc *faultCtx) (func(), string, error) {
			// Calls pause too: any frame from the hub counts as a sign of
			// life, so only a quiet hub that ignores pings tests liveness.
			fc.d.paused.Add(1)
			conns := fc.r.hub.Conns()
			for _, c := range conns {
				c.StopPonging()
			}
			return func() {
				defer fc.d.paused.Add(-1)
				// Long enough for the node's ping interval and pong timeout
				// (2 s + 5 s), however short the episode.
				deadline := time.After(15 * time.Second)
				for _, c := range conns {
					select {
					case <-c.Done():
					case <-deadline:
						return
					}
				}
			}, fmt.Sprintf("%d connections stop answering pings; calls pause", len(conns)), nil
		}},
		{name: "reload-valid", apply: func(fc *faultCtx) (func(), string, error) {
			fc.r.version++
			if err := os.WriteFile(fc.r.configPath, []byte(fc.r.config(fc.r.version)), 0o600); err != nil {
				return nil, "", err
			}
			return nil, fmt.Sprintf("SIGHUP with placeholder version %d", fc.r.version), fc.r.hangup()
		}},
		{name: "reload-invalid", apply: func(fc *faultCtx) (func(), string, error) {
			if err := os.WriteFile(fc.r.configPath, []byte(invalidConfig), 0o600); err != nil {
				return nil, "", err
			}
			if err := fc.r.hangup(); err != nil {
				return nil, "", err
			}
			return func() {
				_ = os.WriteFile(fc.r.configPath, []byte(fc.r.config(fc.r.version)), 0o600)
			}, "SIGHUP with an invalid config", nil
		}},
		{name: "kill-9-plugin", apply: func(fc *faultCtx) (func(), string, error) {
			kids := descendants(fc.r.pid)
			if len(kids) == 0 {
				return nil, "no plugin process running", nil
			}
			victim := kids[fc.rng.IntN(len(kids))]
			what := cmdline(victim)
			if err := syscall.Kill(victim, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return nil, "", err
			}
			return nil, fmt.Sprintf("pid %d: %s", victim, what), nil
		}},
		{name: "hanging-plugin", apply: func(fc *faultCtx) (func(), string, error) {
			n := 2 + fc.rng.IntN(3)
			fc.d.hang(n)
			return fc.d.cancelHung, fmt.Sprintf("%d calls hang until cancelled", n), nil
		}},
		{name: "disk-full", apply: fillStateDir},
		{name: "memory-pressure", apply: memoryPressure},
	}
	for _, f := range fs {
		switch f.name {
		case "disk-full":
			f.skip = r.privateSkip
		case "memory-pressure":
			f.skip = r.cgroupSkip
		}
		if len(r.opts.only) > 0 && !r.opts.only[f.name] {
			f.disabled = true
		}
	}
	return fs
}

// hangup sends SIGHUP and waits a moment for the daemon to log its reload.
func (r *rig) hangup() error {
	mark := r.rec.eventCount()
	if err := r.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return fmt.Errorf("SIGHUP: %w", err)
	}
	r.rec.wait(time.Now().Add(10*time.Second), func() bool { return r.rec.hasEventLocked(mark, "daemon-log") })
	return nil
}

// fillStateDir fills the tmpfs under the daemon's state directory, seen
// through /proc/PID/root (the daemon's own mount namespace).
func fillStateDir(fc *faultCtx) (func(), string, error) {
	path := filepath.Join(fmt.Sprintf("/proc/%d/root", fc.r.pid), fc.r.stateDir, "soak-filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("create the filler: %w", err)
	}
	buf := make([]byte, 64<<10)
	total := 0
	for {
		if total > 64<<20 {
			f.Close()
			os.Remove(path)
			return nil, "", fmt.Errorf("wrote 64 MiB into %s without filling it: it is not the soak's small tmpfs", fc.r.stateDir)
		}
		n, err := f.Write(buf)
		total += n
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				f.Close()
				os.Remove(path)
				return nil, "", fmt.Errorf("fill the state dir: %w", err)
			}
			break
		}
	}
	f.Close()
	return func() { _ = os.Remove(path) }, fmt.Sprintf("state dir tmpfs full (%d KiB filler)", total>>10), nil
}
