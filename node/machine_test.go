package node

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vcpnode/vcpnode/config"
	"github.com/vcpnode/vcpnode/wsproto"
)

func TestRegisterToolsDescribesTheMachine(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	gpu := filepath.Join(proc, "0000:01:00.0")
	if err := os.MkdirAll(gpu, 0o755); err != nil {
		t.Fatal(err)
	}
	info := "Model: \t\t NVIDIA GeForce RTX 4090\nIRQ:   \t\t 140\nGPU UUID: \t GPU-0d1f\n"
	if err := os.WriteFile(filepath.Join(gpu, "information"), []byte(info), 0o644); err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, harnessOpt{
		config:  func(c *config.Config) { c.Node.Labels = map[string]string{"gpu": "4090", "site": "home"} },
		timings: func(tm *timings) { tm.gpuProc = proc },
	})
	c := h.accept()
	m, err := c.WaitType(h.ctx, wsproto.TypeRegisterTools)
	if err != nil {
		t.Fatal(err)
	}
	got := m.(wsproto.RegisterTools).Capabilities
	host, _ := os.Hostname()
	if !got.CancelTool || got.OS != runtime.GOOS || got.Arch != runtime.GOARCH || got.Hostname != host ||
		got.Labels["gpu"] != "4090" || got.Labels["site"] != "home" || len(got.Labels) != 2 {
		t.Fatalf("capabilities = %+v", got)
	}
	if len(got.GPUs) != 1 || got.GPUs[0].Name != "NVIDIA GeForce RTX 4090" {
		t.Fatalf("gpus = %+v, want the driver's model", got.GPUs)
	}
	if got.SandboxEnforced == nil {
		t.Fatalf("capabilities say nothing of the sandbox: %+v", got)
	}
}

func TestSMIGPUs(t *testing.T) {
	got := smiGPUs("NVIDIA A100-SXM4-80GB, 81920\nNVIDIA A100-SXM4-80GB, 81920\n")
	if len(got) != 2 || got[1].Name != "NVIDIA A100-SXM4-80GB" || got[1].MemoryMB != 81920 {
		t.Fatalf("smiGPUs = %+v", got)
	}
	if smiGPUs("") != nil {
		t.Fatal("no output should be no GPUs")
	}
}
