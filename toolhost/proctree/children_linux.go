package proctree

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// hasEndedChild reports whether a child of this process has ended and
// waits to be reaped. It only peeks (WNOWAIT): the status stays for
// whoever waits for that child (an exec.Cmd's Wait among others).
func hasEndedChild() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
	return err == nil && info.Signo != 0 || errors.Is(err, unix.EINTR)
}

// childrenFiles: the kernel lists each thread's children in
// /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN).
var childrenFiles = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/thread-self/children")
	return err == nil
})

// ownChildren lists this process's children, those of every thread, from
// /proc/self/task/*/children, else from a walk of /proc. A child forked
// or adopted while it reads may be missed, as by a walk.
func ownChildren() []int {
	var pids []int
	if !childrenFiles() {
		self := os.Getpid()
		for pid, pi := range readProcs() {
			if pi.ppid == self {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	buf := make([]byte, 4096)
	for _, task := range tasks {
		data, _ := readSmall("/proc/self/task/"+task.Name()+"/children", buf)
		for _, f := range bytes.Fields(data) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// readSmall reads the whole file at path into buf, growing it as needed.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := openNoIntr(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := readNoIntr(fd, buf[n:])
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return buf[:n], nil
		}
		n += m
	}
}
