//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
	"github.com/vcpnode/vcpnode/toolhost/sandbox/sandboxtest"
)

// TestSandboxMemoryLimitLetsRuntimesStart: an ordinary user's memory limit
// lets Node.js and Python start and stops them above it. Where the user can
// make no cgroup, the limit is an rlimit the launcher sets; one on the
// address space (RLIMIT_AS) stopped Node.js from starting at all (V8
// reserves its code range up front) and broke the launcher itself (a Go
// program holds over 1 GB of address space from its start). The release
// binary runs the launcher: a race-built one needs more than any limit.
func TestSandboxMemoryLimitLetsRuntimesStart(t *testing.T) {
	t.Parallel()
	sandboxtest.NeedLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("runs vcpnode as uid 65534, which needs root")
	}
	r := newRecipeRig(t, testuser.Nobody)
	doc := "\n[sandbox.profiles.limited]\nextends = \"default\"\nmemory = \"256MiB\"\n"
	f, err := os.OpenFile(r.cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(doc); err != nil {
		t.Fatal(err)
	}
	f.Close()
	work := filepath.Join(r.dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(work, testuser.Nobody, testuser.Nobody); err != nil {
		t.Fatal(err)
	}
	// Each allocates 64 MiB (well under the limit), then 1 GiB (over it).
	runtimes := map[string][]string{
		"node": {"node", "-e", `const a = [Buffer.alloc(64 << 20, 1)]; console.log("started");
try { for (let i = 0; i < 16; i++) a.push(Buffer.alloc(64 << 20, 1)); console.log("allocated 1 GiB") } catch (e) { console.log("refused") }`},
		"python3": {"python3", "-c", `a = [bytearray(64 << 20)]; print("started", flush=True)
try:
    a.append(bytearray(1 << 30)); print("allocated 1 GiB")
except MemoryError:
    print("refused")`},
	}
	for name, argv := range runtimes {
		if _, err := exec.LookPath(name); err != nil {
			t.Logf("%s is not installed here: left out", name)
			continue
		}
		args := append([]string{"sandbox", "run", "--profile", "limited", "--dir", work, "--"}, argv...)
		cmd := r.command(filepath.Join(r.bin, "vcpnode"), args...)
		cmd.Dir = work
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		got := out.String()
		if !strings.HasPrefix(got, "started\n") {
			t.Errorf("%s under a 256 MiB limit as uid %d did not start (%v): stdout %q\nstderr %s", name, testuser.Nobody, err, got, errOut.String())
			continue
		}
		if strings.Contains(got, "allocated 1 GiB") {
			t.Errorf("%s under a 256 MiB limit as uid %d allocated 1 GiB: %q", name, testuser.Nobody, got)
		}
		t.Log(name + ": " + strings.ReplaceAll(strings.TrimSpace(fmt.Sprint(got, " ", err)), "\n", " / "))
	}
}
