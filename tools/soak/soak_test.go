//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if helperMode() { // the daemon runs this test binary as the soak's plugins
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSoakReportsABrokenDaemon builds vcpnode with -tags soakbroken (the
// daemon broken on purpose: node/soakbroken.go, in no release build) and
// runs the quick soak against it, with hub restarts so that it reconnects.
// Each broken build must fail the soak with a report that names the
// violated invariant, the seed to replay, the fault sequence and the
// history that shows it.
func TestSoakReportsABrokenDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test builds the daemon and soaks it twice, about a minute")
	}
	bin, err := buildVCPNode(t.Context(), t.TempDir(), "soakbroken")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		mode string
		seed uint64
		want []string
		// check looks at the violation's history lines.
		check func(t *testing.T, v *violation, report string)
	}{
		{mode: "drop-result", seed: 11, want: []string{"SOAK FAILED: no tool_result", "on a connection that is still open: lost"},
			check: func(t *testing.T, v *violation, report string) {
				// Only connections after the first drop a result: a call lost
				// on the first would be the soak failing for another reason.
				if first := firstRegistered(v); v.Conn == first {
					t.Errorf("the lost call was on the first connection %s, which the broken build leaves alone", first)
				}
				if !strings.Contains(report, "execute_tool     conn="+v.Conn+" id="+v.Key) {
					t.Errorf("the history lacks the lost call's execute_tool (conn %s, id %s)", v.Conn, v.Key)
				}
				if strings.Contains(report, "tool_result      conn="+v.Conn+" id="+v.Key+" ") {
					t.Errorf("the history shows a result for the call reported lost")
				}
			}},
		{mode: "leak-process", seed: 12, want: []string{"SOAK FAILED: resources did not return to the baseline", "child processes", ": sleep 3600"},
			check: func(t *testing.T, v *violation, report string) {
				regs := 0
				for _, e := range v.Lines {
					if e.Kind == "register_tools" {
						regs++
					}
				}
				if regs < 2 {
					t.Errorf("the history shows %d registrations, want the reconnect that leaked", regs)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
			defer cancel()
			var out bytes.Buffer
			o := options{
				seed: c.seed, duration: 4 * time.Second, quick: true, privileged: false, binary: bin,
				// The soak's own slack: under load a hub in this (race-built)
				// process may see a connection end late.
				callTimeout: 5 * time.Second, slack: 30 * time.Second, settle: 30 * time.Second,
				only:      map[string]bool{"hub-restart": true},
				daemonEnv: []string{"VCPNODE_SOAKBROKEN=" + c.mode},
				out:       &out,
			}
			s, err := run(ctx, o)
			if s != nil && s.dir != "" {
				defer func() {
					if t.Failed() {
						t.Logf("the daemon's log and files are kept in %s", s.dir)
						return
					}
					os.RemoveAll(s.dir) // kept for a violation; the test has read what it needs
				}()
			}
			if err != nil {
				t.Fatalf("the soak could not run: %v\n%s", err, out.String())
			}
			if s.violation == nil {
				printFigures(&out, s)
				t.Fatalf("the soak passed a daemon built to %s after a reconnect:\n%s", c.mode, out.String())
			}
			printViolation(&out, s)
			report := out.String()
			t.Logf("the report:\n%s", report)
			want := append(c.want, "seed "+itoa(c.seed)+"; replay with: go run ./tools/soak -seed "+itoa(c.seed),
				"fault sequence", "history (")
			for _, w := range want {
				if !strings.Contains(report, w) {
					t.Errorf("the report lacks %q", w)
				}
			}
			c.check(t, s.violation, report)
		})
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// firstRegistered is the connection of the first register_tools in the
// violation's history.
func firstRegistered(v *violation) string {
	for _, e := range v.Lines {
		if e.Kind == "register_tools" {
			return e.Conn
		}
	}
	return ""
}

// TestPluginRunsAreToldApart: a process running one of the soak's plugins
// counts as a plugin run (the baseline waits for a reading without one);
// any other child does not.
func TestPluginRunsAreToldApart(t *testing.T) {
	var pids []int
	for _, args := range [][]string{{os.Args[0], modeSync}, {"sleep", "60"}} {
		cmd := exec.Command(args[0], args[1:]...)
		stdin, err := cmd.StdinPipe() // the plugin waits for its arguments
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stdin.Close()
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		pids = append(pids, cmd.Process.Pid)
	}
	if got := pluginRuns(pids); got != 1 {
		t.Errorf("%d plugin runs among a plugin and a sleep, want 1", got)
	}
	if got := pluginRuns(pids[1:]); got != 0 {
		t.Errorf("%d plugin runs in a sleep, want 0", got)
	}
}
