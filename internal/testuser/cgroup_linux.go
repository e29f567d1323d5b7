package testuser

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Delegate makes a cgroup named name below each of parents (cgroup v2 or
// v1 group directories this root process may write) and gives it to uid
// Nobody, as systemd's Delegate=yes gives a service its subtree; they are
// removed when t ends, once empty. A parent that refuses is left out, said
// in the log.
func Delegate(t *testing.T, name string, parents ...string) []string {
	t.Helper()
	var out []string
	for _, parent := range parents {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Logf("no cgroup to delegate below %s: %v", parent, err)
			continue
		}
		t.Cleanup(func() { removeCgroup(t, dir) })
		// Marked as systemd marks a unit's cgroup under Delegate=yes.
		for _, attr := range []string{"trusted.delegate", "user.delegate"} {
			if err := syscall.Setxattr(dir, attr, []byte("1"), 0); err != nil {
				t.Logf("cannot mark %s delegated (%s): %v", dir, attr, err)
			}
		}
		// The directory and the files a delegatee writes: its membership
		// (and, in cgroup v2, what its children get).
		for _, f := range []string{"", "cgroup.procs", "tasks", "cgroup.threads", "cgroup.subtree_control"} {
			if err := os.Chown(filepath.Join(dir, f), Nobody, Nobody); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		out = append(out, dir)
	}
	return out
}

// removeCgroup removes dir and what the delegatee left below it, ending
// the processes still there (a pool's launchers leave with the copy, a
// moment after it).
func removeCgroup(t *testing.T, dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			removeCgroup(t, filepath.Join(dir, e.Name()))
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Rmdir(dir)
		if err == nil || os.IsNotExist(err) {
			return
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			t.Logf("cannot remove the delegated cgroup %s: %v", dir, err)
			return
		}
		procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(procs)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(10 * time.Millisecond) // polling the kernel's accounting of their exits
	}
}

// RerunIn is Rerun with the copy a member of cgroups (Delegate's): cloned
// straight into the cgroup v2 one, and joining the cgroup v1 ones before
// it execs, so its tests find them as the daemon's own groups.
func RerunIn(t *testing.T, pattern string, cgroups []string) {
	t.Helper()
	var v1 []string
	v2 := -1
	for _, dir := range cgroups {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		if st.Type != unix.CGROUP2_SUPER_MAGIC {
			v1 = append(v1, dir)
			continue
		}
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		v2 = fd
	}
	rerun(t, pattern, func(cmd *exec.Cmd) {
		if v2 >= 0 {
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, v2
		}
		if len(v1) > 0 {
			// A cgroup v1 group is joined by writing one's own pid into it
			// (the group is nobody's: no root needed).
			join := `for d in ` + shellQuote(v1) + `; do echo $$ > "$d/cgroup.procs" || exit 125; done; exec "$@"`
			cmd.Args = append([]string{"/bin/sh", "-c", join, "sh"}, cmd.Args...)
			cmd.Path = "/bin/sh"
		}
	})
}

func shellQuote(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
