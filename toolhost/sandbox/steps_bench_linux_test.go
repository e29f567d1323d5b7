package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vcpnode/vcpnode/internal/testwait"
)

// stepsPath is where the steps of confined starts are noted while
// BenchmarkConfinedStartSteps runs in the daemon daemonPid: by it and by
// the launchers it starts (this binary), which find the file by their
// parent's pid. Only an existing file is written.
func stepsPath(daemonPid int) string {
	return filepath.Join("/tmp", "vcpnode-steps-"+strconv.Itoa(daemonPid))
}

// A launcher started from this test binary notes its steps when its daemon
// asked for them: set before the package's init functions run.
var _ = noteLauncherSteps()

func noteLauncherSteps() bool {
	if len(os.Args) != 4 || os.Args[0] != launchArg0 {
		return false
	}
	fd, err := unix.Open(stepsPath(os.Getppid()), unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	// Above every fd a launch places.
	if fd, err = highFd(fd, 2*maxLaunchFds); err != nil {
		return false
	}
	stepDone = stepWriter(fd)
	return true
}

// stepWriter notes each step on fd: pid, CLOCK_MONOTONIC, name.
func stepWriter(fd int) func(string) {
	pid := os.Getpid()
	return func(step string) {
		var ts unix.Timespec
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		_, _ = unix.Write(fd, []byte(fmt.Sprintf("%d %d %s\n", pid, ts.Nano(), step)))
	}
}

type stepMark struct {
	pid  int
	at   int64
	name string
}

// BenchmarkConfinedStartSteps: where a confined call of `true` spends its
// time, step by step from Wrap to the run's Close, start and exit,
// unconfined (none), through a launcher that waited (pooled) and one
// started for it (cold), with the call's namespaces, and through a
// launcher that waited without them (pooled-no-ns): the median time of
// each step, from the end of the one before, on the call's path (the
// daemon's steps and those of the launcher that took the call) and, for
// the pooled one, before it waited (off the call's path). Run with
//
//	go test -run '^$' -bench ConfinedStartSteps -benchtime 200x ./toolhost/sandbox/
func BenchmarkConfinedStartSteps(b *testing.B) {
	for _, mode := range []string{"none", "pooled", "cold", "pooled-no-ns"} {
		b.Run(mode, func(b *testing.B) {
			e, mode := benchEnv(b, mode)
			path := stepsPath(os.Getpid())
			f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			defer os.Remove(path)
			defer f.Close()
			profile := Default
			if mode == "none" {
				profile = None
			}
			start := func() int { return e.startTrue(b, profile) }
			start()
			start()
			stepDone = stepWriter(int(f.Fd()))
			defer func() { stepDone = nil }()
			var launchers []int
			b.ResetTimer()
			for range b.N {
				if mode == "pooled" {
					b.StopTimer()
					testwait.For(b, "the pool to fill and wait", func() bool {
						return e.sb.launchers.waiting() == poolSize && allWaiting(b, path, e.waitingPids())
					})
					b.StartTimer()
				}
				launchers = append(launchers, start())
			}
			b.StopTimer()
			if b.N > 1 { // not the run that sizes b.N
				reportSteps(b, path, launchers, os.Getpid())
			}
		})
	}
}

// readSteps reads the steps noted at path.
func readSteps(tb testing.TB, path string) []stepMark {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var marks []stepMark
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 3)
		if len(fields) != 3 {
			continue
		}
		pid, _ := strconv.Atoi(fields[0])
		at, _ := strconv.ParseInt(fields[1], 10, 64)
		marks = append(marks, stepMark{pid, at, fields[2]})
	}
	return marks
}

// allWaiting: every one of pids noted that it waits.
func allWaiting(tb testing.TB, path string, pids []int) bool {
	marks := readSteps(tb, path)
	for _, pid := range pids {
		if !slices.ContainsFunc(marks, func(m stepMark) bool { return m.pid == pid && m.name == "launcher: waiting" }) {
			return false
		}
	}
	return true
}

// reportSteps logs the median of each step of the calls, in the order
// they come: what the launcher that served call k (launchers[k], the
// command itself without one) did before the call (before the daemon's
// "call" mark), then the daemon's steps and that launcher's from the mark
// to the daemon's "run closed"; and apart, the start (to "process
// started") and the exit (from the command's exit as the launcher saw it,
// or from the start's end where no launcher stays).
func reportSteps(b testing.TB, path string, launchers []int, daemon int) {
	marks := readSteps(b, path)
	slices.SortStableFunc(marks, func(x, y stepMark) int { return int(x.at - y.at) })
	var order []string
	took := map[string][]time.Duration{}
	note := func(name string, d time.Duration) {
		if _, ok := took[name]; !ok {
			order = append(order, name)
		}
		took[name] = append(took[name], d)
	}
	var callAt []int
	for i, m := range marks {
		if m.pid == daemon && m.name == "daemon: call" {
			callAt = append(callAt, i)
		}
	}
	calls := 0
	for k, call := range callAt {
		if k >= len(launchers) {
			break
		}
		pid := launchers[k]
		var before, on []stepMark
		for i, m := range marks {
			switch {
			case m.pid == pid && i < call:
				before = append(before, m)
			case i >= call && (m.pid == pid || m.pid == daemon):
				on = append(on, m)
			}
			if i > call && m.pid == daemon && m.name == "daemon: run closed" {
				break
			}
		}
		for i := 1; i < len(before); i++ {
			note("(before the call) "+before[i].name, time.Duration(before[i].at-before[i-1].at))
		}
		for i := 1; i < len(on); i++ {
			note(on[i].name, time.Duration(on[i].at-on[i-1].at))
		}
		at := func(name string) int64 {
			if i := slices.IndexFunc(on, func(m stepMark) bool { return m.name == name }); i >= 0 {
				return on[i].at
			}
			return 0
		}
		started, exited := at("daemon: process started"), at("launcher: command exited")
		if exited == 0 {
			exited = started
		}
		note("the start (call to process started)", time.Duration(started-on[0].at))
		note("the exit (command exited to run closed)", time.Duration(on[len(on)-1].at-exited))
		note("call total", time.Duration(on[len(on)-1].at-on[0].at))
		calls++
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "steps of %d calls, medians:\n", calls)
	for _, name := range order {
		ds := took[name]
		slices.Sort(ds)
		fmt.Fprintf(&sb, "%8.3f ms  %s\n", float64(ds[len(ds)/2])/1e6, name)
	}
	b.Log(sb.String())
}
