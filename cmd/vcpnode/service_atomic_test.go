package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/service"
)

// tree lists every file and directory under root with its mode and content.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", strings.TrimPrefix(p, root), fi.Mode())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += " " + string(data)
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Without a service manager to take it, install refuses before it changes
// anything, and says why; so does a system install of a binary under /tmp.
func TestServiceInstallChangesNothingItCannotFinish(t *testing.T) {
	cases := []struct {
		name    string
		euid    int
		systemd bool
		args    []string
		wantWhy string
	}{
		{"system without systemd", 0, false, nil, "systemd is not the init system here (no /run/systemd/system)"},
		{"user without systemd", 1000, false, nil, "systemd is not the init system here"},
		{"user without a user manager", 1000, true, nil, "no user manager answers in /run/user/1000"},
		{"system binary under /tmp", 0, true, []string{"--binary", "/tmp/vcpnode"}, "/tmp/vcpnode is under /tmp, which the system unit replaces with a private one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := newServiceTest(t, "linux", c.euid)
			if c.systemd {
				st.withSystemd(t)
				if c.euid != 0 {
					if err := os.Remove(filepath.Join(st.root, "/run/user/1000/bus")); err != nil {
						t.Fatal(err)
					}
				}
			}
			before := tree(t, st.root)
			code := st.run(append([]string{"service", "install"}, c.args...)...)
			if code != exitError || !strings.Contains(st.stderr.String(), "service install changed nothing: "+c.wantWhy) {
				t.Errorf("exit %d, stderr %q", code, st.stderr)
			}
			if after := tree(t, st.root); !slices.Equal(before, after) {
				t.Errorf("install changed files:\nbefore %q\nafter  %q", before, after)
			}
			if ran := st.cmds.Take(); len(ran) != 0 {
				t.Errorf("install ran %q", ran)
			}
		})
	}
}

// A step that still fails makes install undo what it did: the files it
// wrote, the files it replaced (restored), the directories it made, and
// the user systemd-sysusers made for it.
func TestServiceInstallUndoesAFailedStep(t *testing.T) {
	for _, userExisted := range []bool{false, true} {
		t.Run(fmt.Sprintf("user existed %v", userExisted), func(t *testing.T) {
			st := newServiceTest(t, "linux", 0)
			st.withSystemd(t)
			passwd := "root:x:0:0:root:/root:/bin/sh\n"
			if userExisted {
				passwd += "vcpnode:x:990:990::/var/lib/vcpnode:/usr/sbin/nologin\n"
			}
			st.writeFile(t, "/etc/passwd", passwd, 0o644)
			st.writeFile(t, "/etc/systemd/system/vcpnode.service", "[Service]\n# an older unit\n", 0o640)
			st.cmds.Fail["systemctl enable"] = 1
			before := tree(t, st.root)

			if code := st.run("service", "install"); code != exitError {
				t.Fatalf("exit %d", code)
			}
			if got := st.stderr.String(); !strings.Contains(got, "systemctl enable vcpnode.service: exit status 1; everything it had done is undone") {
				t.Errorf("stderr = %q", got)
			}
			if after := tree(t, st.root); !slices.Equal(before, after) {
				t.Errorf("install left changes:\nbefore %q\nafter  %q\noutput:\n%s", before, after, st.stdout)
			}
			want := []string{"systemd-sysusers /etc/sysusers.d/vcpnode.conf", "chgrp vcpnode /etc/vcpnode/config.toml", "systemctl daemon-reload", "systemctl enable vcpnode.service"}
			if !userExisted {
				want = append(want, "userdel vcpnode")
			}
			if ran := st.cmds.Take(); !slices.Equal(ran, want) {
				t.Errorf("ran %q, want %q", ran, want)
			}
		})
	}
}

// On this machine, without systemd as PID 1, `service install --system`
// of the real binary changes nothing and says why. It runs in a private
// mount namespace whose /etc is an overlay: whatever it wrote would land
// in the overlay's upper directory, never in the machine's /etc.
func TestServiceInstallOnThisMachineChangesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a mount namespace with an overlay over /etc")
	}
	if _, err := os.Stat(service.SystemdBootedDir); err == nil {
		t.Skip("systemd is PID 1 here: this test shows the refusal on a machine without it")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1) to make a private mount namespace")
	}
	bin := builtBinary(t)
	dir := t.TempDir()
	for _, d := range []string{"upper", "work", "home"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	script := `set -e
mount -t overlay overlay -o lowerdir=/etc,upperdir="$D/upper",workdir="$D/work" /etc
cp /etc/passwd "$D/passwd.before"
set +e
"$BIN" service install --system --binary /usr/local/bin/vcpnode --config /etc/vcpnode/config.toml >"$D/out" 2>&1
echo $? >"$D/code"
cp /etc/passwd "$D/passwd.after"`
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, unshare, "--mount", "--propagation", "private", "sh", "-c", script)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + filepath.Join(dir, "home"), "D=" + dir, "BIN=" + bin}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("could not make a private mount namespace with an overlay over /etc (%v): %s", err, out)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if code, out := strings.TrimSpace(read("code")), read("out"); code != "1" || !strings.Contains(out, "service install changed nothing: systemd is not the init system here") {
		t.Errorf("exit %s, output:\n%s", code, out)
	}
	if read("passwd.before") != read("passwd.after") {
		t.Error("/etc/passwd changed")
	}
	if entries, err := os.ReadDir(filepath.Join(dir, "upper")); err != nil || len(entries) != 0 {
		t.Errorf("install wrote under /etc: %v %v", entries, err)
	}
}

// uninstall --purge removes what install made: the sysusers.d entry, and
// the service's user only when that install made it; a user that was there
// before is kept and named.
func TestServicePurgeRemovesWhatInstallMade(t *testing.T) {
	const user = "vcpnode:x:990:990::/var/lib/vcpnode:/usr/sbin/nologin\n"
	for _, userExisted := range []bool{false, true} {
		t.Run(fmt.Sprintf("user existed %v", userExisted), func(t *testing.T) {
			st := newServiceTest(t, "linux", 0)
			st.withSystemd(t)
			passwd := "root:x:0:0:root:/root:/bin/sh\n"
			if userExisted {
				passwd += user
			}
			st.writeFile(t, "/etc/passwd", passwd, 0o644)
			before := tree(t, st.root)
			st.mustRun(t, "service", "install")
			if !userExisted {
				// What systemd-sysusers does for real.
				st.writeFile(t, "/etc/passwd", passwd+user, 0o644)
			}
			st.cmds.Take()

			out := st.mustRun(t, "service", "uninstall", "--purge")
			ran := st.cmds.Take()
			if got := slices.Contains(ran, "userdel vcpnode"); got == userExisted {
				t.Errorf("ran %q: userdel %v, want %v", ran, got, !userExisted)
			}
			if st.exists("/etc/sysusers.d/vcpnode.conf") {
				t.Error("the sysusers.d entry survived --purge")
			}
			if userExisted && !strings.Contains(out, "kept the vcpnode system user: it existed before install") {
				t.Errorf("output does not name the kept user:\n%s", out)
			}
			if !userExisted {
				st.writeFile(t, "/etc/passwd", passwd, 0o644) // what userdel does
			}
			after := tree(t, st.root)
			for _, p := range after {
				if !slices.Contains(before, p) && !strings.HasPrefix(p, "/etc/systemd") && !strings.HasPrefix(p, "/etc/sysusers.d ") {
					t.Errorf("--purge left %s", p)
				}
			}
		})
	}
}
