//go:build linux

// Command vminit is PID 1 of the test virtual machines internal/vmtest
// boots: it loads the kernel modules of the host's read-only root (9p over
// virtio), makes that tree the guest's root with a tmpfs on /tmp, /run and
// /var/tmp, mounts cgroup2 with nsdelegate at /sys/fs/cgroup, starts one
// test binary in a cgroup of its own and powers the machine off when it
// ends. It reads what to run from /vmtest.json in its initramfs and writes
// the run's output to the second serial port, ending with "vmtest: exit N".
// It is built with CGO_ENABLED=0: the initramfs holds no C library.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// config is /vmtest.json (internal/vmtest writes it).
type config struct {
	Modules []string // initramfs paths of kernel modules, in load order
	RootTag string   // the 9p mount tag of the host's root
	Exe     string   // the test binary, a path on the host's root
	Args    []string // its arguments (without argv[0])
	Dir     string   // its working directory
	// Tree is the checkout Dir lies in (its module's root): a guest
	// tmpfs over /tmp, /run or /var/tmp must not hide it from the tests.
	Tree string
	Env  []string
	// Cgroup is the cgroup (below /sys/fs/cgroup) the binary starts in,
	// with memory, pids and cpu enabled for it; "" is the root cgroup.
	Cgroup string
	// Delegate marks Cgroup as systemd marks a unit's under Delegate=yes.
	Delegate bool
}

// outDev is the serial port the run's output goes to (ttyS0 carries the
// kernel's console).
const outDev = "/dev/ttyS1"

// exeDir is where the test binary's directory is bound in the guest (its
// host directory may lie under the guest's fresh /tmp).
const exeDir = "/run/vmtest"

func main() {
	code, err := run()
	out, oerr := os.OpenFile(outDev, os.O_WRONLY|syscall.O_NOCTTY, 0)
	if oerr != nil {
		out = os.Stderr
	}
	if err != nil {
		fmt.Fprintf(out, "vminit: %v\n", err)
		code = 125
	}
	fmt.Fprintf(out, "vmtest: exit %d\n", code)
	out.Close()
	syscall.Sync()
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	select {} // PID 1 must not exit before the machine is off
}

func run() (int, error) {
	b, err := os.ReadFile("/vmtest.json")
	if err != nil {
		return 0, err
	}
	var c config
	if err := json.Unmarshal(b, &c); err != nil {
		return 0, fmt.Errorf("vmtest.json: %w", err)
	}
	if err := mount("devtmpfs", "/dev", "devtmpfs", 0, ""); err != nil {
		return 0, err
	}
	for _, m := range c.Modules {
		if err := loadModule(m); err != nil {
			return 0, err
		}
	}
	if err := mountRoot(c); err != nil {
		return 0, err
	}
	loopbackUp()
	return start(c)
}

func mount(src, dst, fstype string, flags uintptr, data string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil && !os.IsExist(err) {
		return fmt.Errorf("mkdir %s: %w", dst, err)
	}
	if err := unix.Mount(src, dst, fstype, flags, data); err != nil {
		return fmt.Errorf("mount %s on %s (%s): %w", src, dst, fstype, err)
	}
	return nil
}

func loadModule(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	flags := 0
	if !strings.HasSuffix(path, ".ko") {
		flags = unix.MODULE_INIT_COMPRESSED_FILE // .ko.xz, .ko.zst: the kernel unpacks it
	}
	if err := unix.FinitModule(int(f.Fd()), "", flags); err != nil && err != unix.EEXIST {
		return fmt.Errorf("load %s: %w", path, err)
	}
	return nil
}

// mountStep is one mount of mountRoot's.
type mountStep struct {
	src, dst, fstype string
	flags            uintptr
	data             string
}

// mountRoot makes the host's root, read-only, the guest's root, with
// writable places of the guest's own and the kernel's file systems.
func mountRoot(c config) error {
	const nr = "/newroot"
	ro := uintptr(unix.MS_RDONLY)
	if err := mount(c.RootTag, nr, "9p", ro, "trans=virtio,version=9p2000.L,cache=loose,msize=262144"); err != nil {
		return err
	}
	// The binary's directory and the checkout first: a tmpfs may cover
	// them next (a clone under /tmp).
	if err := mount(filepath.Join(nr, filepath.Dir(c.Exe)), "/exe", "", unix.MS_BIND, ""); err != nil {
		return err
	}
	if c.Tree != "" {
		if err := mount(filepath.Join(nr, c.Tree), "/tree", "", unix.MS_BIND, ""); err != nil {
			return err
		}
	}
	steps := []mountStep{
		{"tmpfs", nr + "/run", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=755"},
		{"tmpfs", nr + "/tmp", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=1777"},
		{"tmpfs", nr + "/var/tmp", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=1777"},
		{"/exe", nr + exeDir, "", unix.MS_MOVE, ""},
		{"devtmpfs", nr + "/dev", "devtmpfs", unix.MS_NOSUID, ""},
		{"tmpfs", nr + "/dev/shm", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=1777"},
		{"devpts", nr + "/dev/pts", "devpts", unix.MS_NOSUID | unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620"},
		{"proc", nr + "/proc", "proc", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, ""},
		{"sysfs", nr + "/sys", "sysfs", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, ""},
		{"cgroup2", nr + "/sys/fs/cgroup", "cgroup2", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, "nsdelegate"},
	}
	if c.Tree != "" {
		steps = append(steps, mountStep{"/tree", nr + c.Tree, "", unix.MS_MOVE, ""})
	}
	for _, s := range steps {
		if err := mount(s.src, s.dst, s.fstype, s.flags, s.data); err != nil {
			return err
		}
	}
	if err := os.Chdir(nr); err != nil {
		return err
	}
	if err := unix.Mount(".", "/", "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("move the new root: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return err
	}
	return os.Chdir("/")
}

// loopbackUp brings lo up (tests listen on loopback).
func loopbackUp() {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	_ = unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// start runs the test binary in its cgroup, reaps every orphan meanwhile
// (PID 1's duty), and returns the binary's exit code.
func start(c config) (int, error) {
	cg, err := prepareCgroup(c)
	if err != nil {
		return 0, err
	}
	out, err := os.OpenFile(outDev, os.O_WRONLY|syscall.O_NOCTTY, 0)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	exe := filepath.Join(exeDir, filepath.Base(c.Exe))
	cmd := exec.Command(exe, c.Args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.Dir, c.Env, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cg >= 0 {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, cg
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("wait: %w", err)
		}
		if pid != cmd.Process.Pid {
			continue
		}
		if ws.Signaled() {
			fmt.Fprintf(out, "vminit: the test binary died of %v\n", ws.Signal())
			return 128 + int(ws.Signal()), nil
		}
		return ws.ExitStatus(), nil
	}
}

// prepareCgroup enables memory, pids and cpu from the root down to
// c.Cgroup's parent, makes c.Cgroup and returns an fd of it (-1 for the
// root cgroup).
func prepareCgroup(c config) (int, error) {
	const root = "/sys/fs/cgroup"
	rel := strings.Trim(c.Cgroup, "/")
	if rel == "" {
		return -1, nil
	}
	dir := root
	for _, part := range strings.Split(rel, "/") {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids +cpu"), 0); err != nil {
			return 0, err
		}
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return 0, err
		}
	}
	if c.Delegate {
		if err := unix.Setxattr(dir, "trusted.delegate", []byte("1"), 0); err != nil {
			return 0, fmt.Errorf("mark %s delegated: %w", dir, err)
		}
	}
	return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}
