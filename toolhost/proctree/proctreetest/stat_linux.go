package proctreetest

import (
	"bytes"
	"os"
	"strconv"
)

const procfs = true

// readStat reads pid's state, parent and thread count; false when the
// process is gone (or the line cannot be read).
func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold anything
	if i < 0 {
		return stat{}, false
	}
	// state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	// utime stime cutime cstime priority nice threads
	f := bytes.Fields(b[i+1:])
	if len(f) < 18 || len(f[0]) != 1 {
		return stat{}, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	threads, _ := strconv.Atoi(string(f[17]))
	return stat{state: f[0][0], ppid: ppid, threads: threads}, true
}
