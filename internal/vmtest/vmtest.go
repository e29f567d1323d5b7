// Package vmtest runs a package's tests again inside a virtual machine
// whose kernel gives them what the machine running the suite may not: a
// pure cgroup v2 hierarchy with the memory, pids and cpu controllers,
// mounted with nsdelegate. The guest is QEMU booting the host's Debian
// kernel (/boot/vmlinuz-*, package linux-image-amd64; unpacked with xz to
// its ELF image, which boots without unpacking itself) with an initramfs
// made at test time: tools/vminit (built CGO_ENABLED=0) as PID
// 1, and the kernel modules that mount the host's root read-only over 9p.
// The test binary already built by go test runs there, from the same
// directory, as root in a cgroup marked delegated (systemd's
// Delegate=yes), with a tmpfs /tmp and no network but loopback. Its output
// comes back over a serial port into the test's log.
//
// Without hardware-assisted KVM the guest is emulated (QEMU's TCG): some
// ten times slower, but the same kernel. Without QEMU (qemu-system-x86) or
// a kernel, Run skips saying which is missing; under CI=true (where
// .ci/run installs them) it fails.
// Only _test files import it (internal/archtest checks).
package vmtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// guestMark is on the guest kernel's command line: Guest looks for it
// there, so that a test binary the guest's tests start again (as another
// user, with an environment of their own) knows it too.
const guestMark = "vcpnode.vmtest=1"

// Slice is the cgroup v2 directory, in the guest, of the test binary's
// cgroup (Slice/vcpnode.service): memory, pids and cpu are enabled for its
// children, as systemd's system.slice has them.
const Slice = "/sys/fs/cgroup/system.slice"

// service is the test binary's cgroup in the guest, below /sys/fs/cgroup.
const service = "system.slice/vcpnode.service"

// Options say what a run does in the guest.
type Options struct {
	// Run is the -test.run pattern of the tests to run in the guest.
	Run string
	// Timeout bounds the whole run, boot included (default 6 minutes,
	// or less when the test's own deadline is nearer).
	Timeout time.Duration

	guestTimeout time.Duration
}

// Guest reports whether this process is a test binary Run started in a guest.
func Guest() bool {
	b, _ := os.ReadFile("/proc/cmdline")
	return slices.Contains(strings.Fields(string(b)), guestMark)
}

// NeedGuest skips t outside a guest, naming the test that runs it in one.
func NeedGuest(t testing.TB, runner string) {
	t.Helper()
	if !Guest() {
		t.Skipf("runs inside a cgroup v2 virtual machine (%s starts it there)", runner)
	}
}

// Run boots a guest and runs there the tests of this test binary that
// o.Run matches; t fails if they fail (or none passed), and each line of
// their output is logged. It skips inside a guest.
func Run(t *testing.T, o Options) {
	t.Helper()
	if Guest() {
		t.Skip("already inside a test virtual machine")
	}
	if testing.Short() {
		t.Skip("-short: the tests in a virtual machine run only in a full run")
	}
	m, why := findMachine()
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no test virtual machine here: %s (.ci/run installs qemu-system-x86 and linux-image-amd64 under CI)", why)
		}
		t.Skipf("no test virtual machine here: %s", why)
	}
	dir := t.TempDir()
	image := m.kernel.image
	elf := filepath.Join(dir, "vmlinux")
	if ok, err := extractELF(image, elf); err != nil {
		t.Fatal(err)
	} else if ok {
		image = elf
	}
	initrd, err := m.initramfs(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 6 * time.Minute
	}
	if dl, ok := t.Deadline(); ok && time.Until(dl)-10*time.Second < timeout {
		timeout = time.Until(dl) - 10*time.Second
	}
	// The guest's own deadline comes first, so that its stacks reach the log.
	o.guestTimeout = timeout - time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	console := filepath.Join(dir, "console.log")
	cmd := exec.CommandContext(ctx, m.qemu,
		"-machine", "q35", "-accel", m.accel, "-cpu", m.cpu, "-smp", "2", "-m", "1536",
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-kernel", image, "-initrd", initrd,
		"-append", "console=ttyS0 quiet rdinit=/init panic=-1 lpj=4000000 tsc=reliable "+guestMark,
		"-serial", "file:"+console, "-serial", "stdio",
		"-virtfs", "local,path=/,mount_tag="+rootTag+",security_model=none,readonly=on,multidevs=remap")
	cmd.Stderr = &bytes.Buffer{}
	cmd.WaitDelay = 5 * time.Second // a killed QEMU's output pipe is not waited on for ever
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, passed := -1, false
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if rest, ok := strings.CutPrefix(line, "vmtest: exit "); ok {
			code, _ = strconv.Atoi(rest)
			continue
		}
		passed = passed || strings.Contains(line, "--- PASS")
		t.Log("guest: " + line)
	}
	werr := cmd.Wait()
	t.Logf("guest run took %v (kernel %s)", time.Since(start).Round(time.Millisecond), m.kernel.version)
	switch {
	case ctx.Err() != nil:
		t.Errorf("the guest did not finish within %v; killed", timeout)
	case code != 0:
		t.Errorf("the guest's tests exited %d (qemu: %v %s)", code, werr, cmd.Stderr)
	case !passed:
		t.Errorf("no test passed in the guest (pattern %q)", o.Run)
	}
	if t.Failed() {
		b, _ := os.ReadFile(console)
		t.Logf("guest console:\n%s", tail(b, 4000))
	}
}

// rootTag is the 9p tag of the host's root.
const rootTag = "hostroot"

type machine struct {
	accel, cpu string
	qemu       string
	kernel     kernel
}

// findMachine finds KVM, QEMU and a kernel; why says what is missing.
func findMachine() (machine, string) {
	var m machine
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return m, "the test machine is Linux on amd64 (" + runtime.GOOS + "/" + runtime.GOARCH + " here)"
	}
	m.accel, m.cpu = "tcg,thread=multi", "max"
	if f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0); err == nil {
		f.Close()
		// A /dev/kvm of PVM (kvm_pvm, a nested cloud's) runs only kernels
		// built for it: the guest then runs emulated.
		if hardwareKVM() {
			m.accel, m.cpu = "kvm", "host"
		}
	}
	var err error
	if m.qemu, err = exec.LookPath("qemu-system-x86_64"); err != nil {
		return m, "no qemu-system-x86_64 (Debian: apt-get install qemu-system-x86)"
	}
	if m.kernel, err = findKernel("/boot", "/lib/modules"); err != nil {
		return m, err.Error()
	}
	return m, ""
}

// hardwareKVM reports whether /dev/kvm is the hardware-assisted KVM
// (kvm_intel, kvm_amd), which boots a distribution's kernel.
func hardwareKVM() bool {
	for _, mod := range []string{"kvm_intel", "kvm_amd"} {
		if _, err := os.Stat("/sys/module/" + mod); err == nil {
			return true
		}
	}
	return false
}

// guestConfig is tools/vminit's /vmtest.json.
type guestConfig struct {
	Modules  []string
	RootTag  string
	Exe      string
	Args     []string
	Dir      string
	Tree     string
	Env      []string
	Cgroup   string
	Delegate bool
}

// checkout is the module root dir lies in (the folder holding go.mod), or
// dir itself outside a module: the guest keeps it visible where its
// fresh /tmp, /run or /var/tmp would hide it (a clone under /tmp).
func checkout(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// initramfs builds tools/vminit and writes the guest's initramfs into dir.
func (m machine) initramfs(dir string, o Options) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	initBin := filepath.Join(dir, "vminit")
	build := exec.Command("go", "build", "-o", initBin, "github.com/vcpnode/vcpnode/tools/vminit")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build tools/vminit: %w\n%s", err, out)
	}
	c := guestConfig{RootTag: rootTag, Exe: exe, Dir: wd, Tree: checkout(wd), Cgroup: service, Delegate: true,
		// One test at a time: two emulated CPUs on a loaded machine start a
		// sandbox's waiting launchers slower than its tests wait for them
		// when several tests start theirs at once.
		Args: []string{"-test.run", o.Run, "-test.v", "-test.count=1", "-test.parallel=1", "-test.timeout", o.guestTimeout.String()},
		Env:  []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/tmp", "TMPDIR=/tmp"}}
	var buf bytes.Buffer
	w := newCPIO(&buf)
	for _, mod := range m.kernel.modules {
		b, err := os.ReadFile(mod)
		if err != nil {
			return "", err
		}
		name := "lib/modules/" + filepath.Base(mod)
		w.file(name, 0o644, b)
		c.Modules = append(c.Modules, "/"+name)
	}
	for _, d := range []string{"dev", "proc", "sys", "newroot", "exe"} {
		w.mkdirAll(d)
	}
	b, err := os.ReadFile(initBin)
	if err != nil {
		return "", err
	}
	w.file("init", 0o755, b)
	js, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	w.file("vmtest.json", 0o644, js)
	if err := w.close(); err != nil {
		return "", err
	}
	file := filepath.Join(dir, "initramfs.cpio")
	return file, os.WriteFile(file, buf.Bytes(), 0o644)
}

// tail is the end of a console log.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
