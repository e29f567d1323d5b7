package placeholders

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func discardLogger() zerolog.Logger { return zerolog.Nop() }

func TestSystemStatusFromFixtures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("loadavg", "0.52 0.40 0.31 2/345 6789\n")
	write("meminfo", "MemTotal:       16384000 kB\nMemFree:  100 kB\nMemAvailable:    8192000 kB\n")
	write("os-release", "NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n")
	s := &SystemStatus{
		Placeholder: "DevBoxStatus",
		DiskPath:    dir,
		procDir:     dir,
		osRelease:   filepath.Join(dir, "os-release"),
		hostname:    func() (string, error) { return "devbox", nil },
	}
	out, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !out.Verbatim {
		t.Error("system status must not be read as a per-key JSON map")
	}
	wants := []string{
		"host devbox",
		"OS Ubuntu 24.04.1 LTS (" + runtime.GOOS + "/" + runtime.GOARCH + ")",
		"load 0.52 0.40 0.31 (",
		"memory 7.8 GiB available of 15.6 GiB",
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		wants = append(wants, "disk "+dir+" ")
	}
	for _, want := range wants {
		if !strings.Contains(out.Text, want) {
			t.Errorf("status %q lacks %q", out.Text, want)
		}
	}
}

func TestSystemStatusDegrades(t *testing.T) {
	dir := t.TempDir() // no proc files, no os-release, no such disk path
	s := &SystemStatus{
		Placeholder: "S",
		DiskPath:    filepath.Join(dir, "missing"),
		procDir:     dir,
		osRelease:   filepath.Join(dir, "os-release"),
		hostname:    func() (string, error) { return "", errors.New("no name") },
	}
	out, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := "OS " + runtime.GOOS + "/" + runtime.GOARCH; out.Text != want {
		t.Fatalf("status = %q, want just %q", out.Text, want)
	}
}

func TestSystemStatusHere(t *testing.T) {
	s := &SystemStatus{Placeholder: "S"}
	out, err := s.Run(context.Background())
	if err != nil || !strings.Contains(out.Text, "OS ") {
		t.Fatalf("status on this machine = %q, %v", out.Text, err)
	}
	t.Logf("status on this machine: %s", out.Text)
}

func TestHumanBytes(t *testing.T) {
	cases := []struct {
		n    uint64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{16384000 << 10, "15.6 GiB"},
		{5 << 40, "5.0 TiB"},
		{1 << 63, "8.0 EiB"},
	}
	for _, c := range cases {
		if got := humanBytes(c.n); got != c.want {
			t.Errorf("humanBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
