package main

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

func TestParsePPID(t *testing.T) {
	cases := map[string]int{
		"1234 (vcpnode) S 1 1234 1234 0 -1":           1,
		"77 (a b) c)) R 42 77 77 0 -1 4194304":        42,
		"9 (node official.js) S 8 9 9 0 -1 4194560 1": 8,
	}
	for line, want := range cases {
		if got, ok := parsePPID([]byte(line)); !ok || got != want {
			t.Errorf("parsePPID(%q) = %d, %v; want %d", line, got, ok, want)
		}
	}
	for _, bad := range []string{"", "1234 vcpnode S 1", "1 (x)"} {
		if _, ok := parsePPID([]byte(bad)); ok {
			t.Errorf("parsePPID(%q) succeeded", bad)
		}
	}
}

func TestParseCPUTime(t *testing.T) {
	// utime 150, stime 50, cutime 275, cstime 25 ticks: 5 s.
	line := "4242 (node official.js) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 275 25 20 0 11 0 100 1000 200"
	got, err := parseCPUTime([]byte(line))
	if err != nil || got != 5*time.Second {
		t.Errorf("parseCPUTime = %v, %v; want 5s", got, err)
	}
	if _, err := parseCPUTime([]byte("1 (x) S 1 2 3")); err == nil {
		t.Error("a short line parsed")
	}
}

// TestTreeRSSCountsChildren starts sh with a child (cat, waiting on the
// stdin it shares) and checks that the tree's RSS is both processes' sum.
func TestTreeRSSCountsChildren(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc: Linux only")
	}
	cmd := exec.Command("sh", "-c", "cat; exit 0")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		_ = cmd.Wait()
	}()
	sh := cmd.Process.Pid
	var kids []int
	testwait.For(t, "sh to start cat", func() bool {
		kids, err = descendants(sh)
		return err == nil && len(kids) == 1
	})
	shRSS, err := statusField(sh, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	catRSS, err := statusField(kids[0], "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := treeRSS(sh)
	if err != nil {
		t.Fatal(err)
	}
	if tree != shRSS+catRSS {
		t.Errorf("tree RSS %d, want sh's %d + cat's %d", tree, shRSS, catRSS)
	}
	if own, err := descendants(os.Getpid()); err != nil || !slices.Contains(own, kids[0]) {
		t.Errorf("descendants of the test = %v (%v), without its grandchild %d", own, err, kids[0])
	}
}
