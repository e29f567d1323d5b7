package sandbox

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Where no cgroup holds a limit (an ordinary user without a delegated
// one), rlimits of each process do, and the kernel counts no hits of
// them: what a run reached is read from how its processes died and what
// they said. A signal the kernel sends for one rlimit alone (SIGXCPU,
// SIGXFSZ) names it; a crash or a refused fork under the profile's
// RLIMIT_DATA or RLIMIT_NPROC is only probably theirs.

// rlimitSignals are the signals the kernel sends at an rlimit, as Go's
// exit errors and shells name a process they killed.
var rlimitSignals = []struct {
	mark *regexp.Regexp
	name string
	res  int
}{
	{regexp.MustCompile(`(?i)CPU time limit exceeded`), "the CPU time rlimit (RLIMIT_CPU) reached: a process was killed by SIGXCPU", unix.RLIMIT_CPU},
	{regexp.MustCompile(`(?i)File size limit exceeded`), "the file size rlimit (RLIMIT_FSIZE) reached: a process was killed by SIGXFSZ", unix.RLIMIT_FSIZE},
}

// outOfMemory are what a process says, or how it dies, when an allocation
// fails: the C library's and the runtimes' words, and the crashes of a
// program that does not check (SIGSEGV) or gives up (SIGABRT).
var outOfMemory = regexp.MustCompile(`Cannot allocate memory|MemoryError|[Oo]ut of memory|std::bad_alloc|ENOMEM|` +
	`(?i:segmentation fault)|signal: aborted|^Aborted|\d+ Aborted\b|\bAborted \(core dumped\)`)

// forkRefused are what a shell or runtime says when fork, clone or a
// thread's start answers EAGAIN.
var forkRefused = regexp.MustCompile(`(?i)(fork|spawn|clone|thread)\b.*(Resource temporarily unavailable|EAGAIN)|` +
	`(?i)cannot fork|can't fork|BlockingIOError: \[Errno 11\]|failed to create new OS thread`)

// rlimitHits names the rlimits a failed run reached, from its error's
// text and its outputs.
func (r *Run) rlimitHits(err error, outputs [][]byte) []string {
	if r.pol == nil {
		return nil
	}
	texts := append([][]byte{[]byte(err.Error())}, outputs...)
	find := func(re *regexp.Regexp) string {
		for _, t := range texts {
			sc := bufio.NewScanner(bytes.NewReader(t))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if line := sc.Text(); re.MatchString(line) {
					return clip(strings.TrimSpace(line))
				}
			}
		}
		return ""
	}
	var out []string
	for _, s := range rlimitSignals {
		if find(s.mark) != "" {
			out = append(out, s.name+daemonRlimit(s.res))
		}
	}
	if _, ok := r.pol.Rlimits[unix.RLIMIT_DATA]; ok {
		if line := find(outOfMemory); line != "" {
			out = append(out, "probably the "+r.limits.limitName("memory")+
				" (held by RLIMIT_DATA, per process: the kernel counts no hits): "+strconv.Quote(line))
		}
	}
	if _, ok := r.pol.Rlimits[unix.RLIMIT_NPROC]; ok {
		if line := find(forkRefused); line != "" {
			out = append(out, "probably the "+r.limits.limitName("pids")+" (held by RLIMIT_NPROC, which counts every process of uid "+
				strconv.Itoa(os.Getuid())+", not the call's alone: the kernel counts no hits): "+strconv.Quote(line))
		}
	}
	return out
}

// daemonRlimit says the daemon's own soft limit of res, which its tools
// inherit, when it has one; else the run set it itself.
func daemonRlimit(res int) string {
	var l unix.Rlimit
	if unix.Getrlimit(res, &l) != nil || l.Cur == unix.RLIM_INFINITY {
		return " (set within the call: the daemon has none)"
	}
	unit := " bytes"
	if res == unix.RLIMIT_CPU {
		unit = " s"
	}
	return " (the daemon's, which its tools inherit: " + strconv.FormatUint(l.Cur, 10) + unit + ")"
}
