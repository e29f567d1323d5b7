package vmtest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGuestBoots: the guest runs this binary's TestInGuest as root, in a
// delegated cgroup of a pure cgroup v2 hierarchy mounted with nsdelegate
// whose memory, pids and cpu controllers are offered to it.
func TestGuestBoots(t *testing.T) {
	t.Parallel()
	Run(t, Options{Run: "^TestInGuest$", Timeout: 90 * time.Second})
}

func TestInGuest(t *testing.T) {
	NeedGuest(t, "TestGuestBoots")
	if os.Geteuid() != 0 {
		t.Errorf("uid %d in the guest, want root", os.Geteuid())
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(own)) != "0::/system.slice/vcpnode.service" {
		t.Errorf("/proc/self/cgroup = %q, want only 0::/system.slice/vcpnode.service", own)
	}
	mounts, _ := os.ReadFile("/proc/self/mountinfo")
	var cg string
	for _, line := range strings.Split(string(mounts), "\n") {
		if strings.Contains(line, " - cgroup") {
			if cg != "" {
				t.Errorf("a second cgroup mount: %s", line)
			}
			cg = line
		}
	}
	if f := strings.Fields(cg); len(f) < 5 || f[4] != "/sys/fs/cgroup" || !strings.Contains(cg, " - cgroup2 ") || !strings.Contains(cg, "nsdelegate") {
		t.Errorf("cgroup mount %q, want cgroup2 on /sys/fs/cgroup with nsdelegate", cg)
	}
	dir := "/sys/fs/cgroup/system.slice/vcpnode.service"
	ctl, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	for _, c := range []string{"memory", "pids", "cpu"} {
		if !strings.Contains(" "+strings.TrimSpace(string(ctl))+" ", " "+c+" ") {
			t.Errorf("%s not offered to %s (%q)", c, dir, ctl)
		}
	}
	buf := make([]byte, 8)
	if n, err := syscall.Getxattr(dir, "trusted.delegate", buf); err != nil || string(buf[:n]) != "1" {
		t.Errorf("%s not marked delegated: %q %v", dir, buf[:n], err)
	}
	if _, err := os.Stat("/tmp"); err != nil {
		t.Error(err)
	}
	// The binary runs in its package's folder of the checkout, also when
	// the checkout lies under /tmp, which the guest covers with its own.
	for _, f := range []string{"vmtest_linux_test.go", "../../go.mod"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the checkout is not there in the guest: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(t.TempDir(), "w"), []byte("x"), 0o600); err != nil {
		t.Errorf("the guest's temp dir is not writable: %v", err)
	}
	if err := os.WriteFile("/etc/vmtest-probe", nil, 0o600); err == nil {
		t.Error("the host's root is writable from the guest")
		os.Remove("/etc/vmtest-probe")
	}
}
