package node

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/vcpnode/vcpnode/wsproto"
)

// What register_tools tells the server about this machine, beside
// cancelTool: the server stores it and shows it in its node list, so a
// fleet's owner sees which node is which. Nothing secret: no paths, no
// addresses, no config values but the owner's labels.

// WithVersion names the vcpnode version sent to the server.
func WithVersion(v string) Option {
	return func(n *Node) { n.version = v }
}

func (n *Node) capabilities(labels map[string]string) wsproto.Capabilities {
	c := wsproto.Capabilities{CancelTool: true, OS: runtime.GOOS, Arch: runtime.GOARCH, Version: n.version,
		Labels: labels, GPUs: n.gpus()}
	c.Hostname, _ = os.Hostname()
	if n.sandbox != nil {
		st := n.sandbox.Status()
		enforced := st.Mechanism != "" && st.Mechanism != "none" && len(st.NotEnforced) == 0
		c.SandboxEnforced = &enforced
	}
	return c
}

// gpus are the machine's NVIDIA GPUs, found once.
func (n *Node) gpus() []wsproto.GPU {
	n.gpuOnce.Do(func() { n.gpuList = findGPUs(n.timings.gpuProc) })
	return n.gpuList
}

// findGPUs reads the NVIDIA driver's /proc files (Linux), else asks
// nvidia-smi when it is on PATH; none found is nil.
func findGPUs(procDir string) []wsproto.GPU {
	if procDir == "" {
		procDir = "/proc/driver/nvidia/gpus"
	}
	if gpus := procGPUs(procDir); len(gpus) > 0 {
		return gpus
	}
	path, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil
	}
	return smiGPUs(string(out))
}

// procGPUs reads the "Model:" line of each GPU's information file.
func procGPUs(dir string) []wsproto.GPU {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "information"))
	var out []wsproto.GPU
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if model, ok := strings.CutPrefix(sc.Text(), "Model:"); ok {
				if name := strings.TrimSpace(model); name != "" {
					out = append(out, wsproto.GPU{Name: name})
				}
				break
			}
		}
		fh.Close()
	}
	return out
}

// smiGPUs parses nvidia-smi's "name, memory MiB" lines.
func smiGPUs(out string) []wsproto.GPU {
	var gpus []wsproto.GPU
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, mem, _ := strings.Cut(line, ",")
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		g := wsproto.GPU{Name: name}
		if mb, err := strconv.Atoi(strings.TrimSpace(mem)); err == nil {
			g.MemoryMB = mb
		}
		gpus = append(gpus, g)
	}
	return gpus
}
