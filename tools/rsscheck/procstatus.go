package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procStatus holds the memory lines of /proc/<pid>/status, in bytes.
type procStatus struct {
	RSS     int64 // VmRSS: resident now
	HWM     int64 // VmHWM: peak resident
	RSSAnon int64 // RssAnon: heap, stacks (what the program itself uses)
	RSSFile int64 // RssFile: mapped binary and libraries
}

func (s procStatus) String() string {
	return fmt.Sprintf("VmRSS %.1f MiB (anon %.1f, file %.1f), VmHWM %.1f MiB",
		mib(s.RSS), mib(s.RSSAnon), mib(s.RSSFile), mib(s.HWM))
}

func readProcStatus(pid int) (procStatus, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	f, err := os.Open(path)
	if err != nil {
		return procStatus{}, fmt.Errorf("read resident memory (Linux only): %w", err)
	}
	defer f.Close()
	var s procStatus
	fields := map[string]*int64{"VmRSS": &s.RSS, "VmHWM": &s.HWM, "RssAnon": &s.RSSAnon, "RssFile": &s.RSSFile}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		dst, want := fields[name]
		if !ok || !want {
			continue
		}
		// Lines look like "VmRSS:	   10240 kB".
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return procStatus{}, fmt.Errorf("%s: cannot parse %s line %q: %w", path, name, sc.Text(), err)
		}
		*dst = kb << 10
		delete(fields, name)
	}
	if err := sc.Err(); err != nil {
		return procStatus{}, fmt.Errorf("read %s: %w", path, err)
	}
	if len(fields) > 0 {
		return procStatus{}, fmt.Errorf("%s has no VmRSS/VmHWM/RssAnon/RssFile lines: not a Linux /proc?", path)
	}
	return s, nil
}
