package vmtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// wantModules are what the guest needs of its kernel to reach the host's
// root: PCI virtio and 9p over it (a distribution kernel has them as
// modules; built into the kernel they need no loading).
var wantModules = []string{"virtio_pci", "9pnet_virtio", "9p"}

// kernel is an installed kernel the guest can boot.
type kernel struct {
	image   string   // /boot/vmlinuz-VERSION
	version string   // VERSION
	modules []string // host paths of the modules to load, in order
}

// findKernel picks the newest kernel in boot whose modules (under
// modDir/VERSION) have what the guest needs.
func findKernel(boot, modDir string) (kernel, error) {
	images, _ := filepath.Glob(filepath.Join(boot, "vmlinuz-*"))
	slices.Sort(images)
	slices.Reverse(images)
	var why []string
	for _, img := range images {
		v := strings.TrimPrefix(filepath.Base(img), "vmlinuz-")
		mods, err := moduleOrder(filepath.Join(modDir, v), wantModules)
		if err != nil {
			why = append(why, v+": "+err.Error())
			continue
		}
		if f, err := os.Open(img); err != nil {
			why = append(why, err.Error())
			continue
		} else {
			f.Close()
		}
		return kernel{image: img, version: v, modules: mods}, nil
	}
	if len(images) == 0 {
		return kernel{}, fmt.Errorf("no kernel image %s/vmlinuz-* (Debian: apt-get install linux-image-amd64)", boot)
	}
	return kernel{}, errors.New("no usable kernel: " + strings.Join(why, "; "))
}

// moduleOrder lists the module files (and their dependencies first) that
// load names, from dir's modules.dep; a name in modules.builtin needs none.
func moduleOrder(dir string, names []string) ([]string, error) {
	deps, err := readDeps(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	builtin, _ := os.ReadFile(filepath.Join(dir, "modules.builtin"))
	byName := map[string]string{}
	for mod := range deps {
		byName[moduleName(mod)] = mod
	}
	for _, line := range strings.Split(string(builtin), "\n") {
		if line != "" {
			byName[moduleName(line)] = ""
		}
	}
	var out []string
	add := func(mod string) {
		if p := filepath.Join(dir, mod); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, name := range names {
		mod, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("no module %s in %s", name, dir)
		}
		if mod == "" {
			continue // built in
		}
		// modules.dep lists every dependency, the ones loaded last first.
		for _, d := range slices.Backward(deps[mod]) {
			add(d)
		}
		add(mod)
	}
	return out, nil
}

// readDeps reads a modules.dep: module → its dependencies.
func readDeps(file string) (map[string][]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	deps := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		mod, rest, ok := strings.Cut(sc.Text(), ":")
		if ok {
			deps[mod] = strings.Fields(rest)
		}
	}
	return deps, sc.Err()
}

// moduleName is a module's name from its path: kernel/fs/9p/9p.ko.xz → 9p.
func moduleName(path string) string {
	name, _, _ := strings.Cut(filepath.Base(path), ".ko")
	return strings.ReplaceAll(name, "-", "_")
}

// xzMagic starts an xz stream.
var xzMagic = []byte{0xfd, '7', 'z', 'X', 'Z', 0}

// extractELF writes to file the uncompressed kernel (an ELF vmlinux) that
// the xz-compressed bzImage image carries, with xz (xz-utils; the kernel's
// stream has a BCJ filter Go's xz packages lack). QEMU boots it through its
// PVH entry point: emulated, the compressed image's own unpacking takes
// most of the boot (15 of 20 s on the 2-core VM). false when image holds
// no xz stream or there is no xz.
func extractELF(image, file string) (bool, error) {
	b, err := os.ReadFile(image)
	if err != nil {
		return false, err
	}
	i := bytes.Index(b, xzMagic)
	unxz, lerr := exec.LookPath("xz")
	if i < 0 || lerr != nil {
		return false, nil
	}
	f, err := os.Create(file)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(unxz, "--decompress", "--stdout", "--single-stream")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(b[i:]), f, &stderr
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("unpack %s: %w: %s", image, err, stderr.Bytes())
	}
	head := make([]byte, 4)
	if _, err := f.ReadAt(head, 0); err != nil || string(head) != "\x7fELF" {
		return false, nil
	}
	return true, nil
}
