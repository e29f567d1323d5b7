package placeholders

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// SystemStatusInterval is how often the built-in system status refreshes.
const SystemStatusInterval = time.Minute

// SystemStatus is the built-in placeholder describing this machine: host
// name, OS, load, memory and free disk space, on one line. What a platform
// cannot tell (load and memory come from Linux's /proc) is left out.
type SystemStatus struct {
	Placeholder string // the key it feeds, braces optional
	DiskPath    string // the file system whose free space is shown; "" = "/"

	// Where the Linux facts are read from; tests point them at fixtures.
	procDir   string // "" = "/proc"
	osRelease string // "" = "/etc/os-release"
	hostname  func() (string, error)
}

// Name implements Source.
func (s *SystemStatus) Name() string { return "system status" }

// Placeholders implements Source.
func (s *SystemStatus) Placeholders() []string { return []string{s.Placeholder} }

// Run implements Source.
func (s *SystemStatus) Run(ctx context.Context) (Output, error) {
	if err := ctx.Err(); err != nil {
		return Output{}, err
	}
	var parts []string
	add := func(part string, err error) {
		if err == nil && part != "" {
			parts = append(parts, part)
		}
	}
	add(s.host())
	parts = append(parts, s.osName())
	add(s.load())
	add(s.memory())
	add(s.disk())
	return Output{Text: strings.Join(parts, "; "), Verbatim: true}, nil
}

func (s *SystemStatus) host() (string, error) {
	hostname := s.hostname
	if hostname == nil {
		hostname = os.Hostname
	}
	name, err := hostname()
	if err != nil {
		return "", err
	}
	return "host " + name, nil
}

func (s *SystemStatus) osName() string {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	path := s.osRelease
	if path == "" {
		path = "/etc/os-release"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "OS " + platform
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "PRETTY_NAME="); ok {
			if name := strings.Trim(v, `"'`); name != "" {
				return fmt.Sprintf("OS %s (%s)", name, platform)
			}
		}
	}
	return "OS " + platform
}

func (s *SystemStatus) proc(name string) string {
	dir := s.procDir
	if dir == "" {
		dir = "/proc"
	}
	return filepath.Join(dir, name)
}

// load reads the 1, 5 and 15 minute load averages.
func (s *SystemStatus) load() (string, error) {
	data, err := os.ReadFile(s.proc("loadavg"))
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "", fmt.Errorf("%s: want 3 load averages, got %q", s.proc("loadavg"), data)
	}
	return fmt.Sprintf("load %s %s %s (%d CPUs)", f[0], f[1], f[2], runtime.NumCPU()), nil
}

// memory reads MemAvailable and MemTotal, which /proc/meminfo gives in kB.
func (s *SystemStatus) memory() (string, error) {
	data, err := os.ReadFile(s.proc("meminfo"))
	if err != nil {
		return "", err
	}
	kb := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		if n, err := strconv.ParseUint(f[0], 10, 64); err == nil {
			kb[name] = n
		}
	}
	avail, okA := kb["MemAvailable"]
	total, okT := kb["MemTotal"]
	if !okA || !okT {
		return "", errors.New("meminfo has no MemAvailable or MemTotal")
	}
	return fmt.Sprintf("memory %s available of %s", humanBytes(avail<<10), humanBytes(total<<10)), nil
}

func (s *SystemStatus) disk() (string, error) {
	path := s.DiskPath
	if path == "" {
		path = "/"
	}
	free, total, err := diskSpace(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("disk %s %s free of %s", path, humanBytes(free), humanBytes(total)), nil
}

// humanBytes renders n in binary units with one decimal, "15.6 GiB".
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
