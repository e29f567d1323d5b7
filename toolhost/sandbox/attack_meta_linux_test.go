package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vcpnode/vcpnode/internal/testuser"
)

// metaAttacks change what Landlock does not guard — a file's mode, its
// times, its owner and its extended attributes — on each file of VICTIMS
// (name → path), by path and through a descriptor opened for reading. A
// root daemon's tool is uid 0 and owns root's files: a chmod needs no
// capability, and `chmod 666 /etc/shadow` or `chmod -x /bin/*` would
// reach the whole machine; an ordinary user's tool owns the user's files
// (`chmod 644 ~/.ssh/id_ed25519`, the node's own key).
const metaAttacks = `
for name, p in VICTIMS.items():
    try_(name + " chmod", lambda: os.chmod(p, 0o666))
    try_(name + " utime", lambda: os.utime(p, (0, 0)))
    try_(name + " chown", lambda: os.chown(p, os.getuid(), os.getgid()))
    try_(name + " setxattr", lambda: os.setxattr(p, "user.vcpnode-test", b"x"))
    def fchmod(p=p):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fchmod(fd, 0o666)
        finally:
            os.close(fd)
    try_(name + " fchmod", fchmod)
    # A hard link into its own folder would let it write the file there.
    try_(name + " link", lambda: os.link(p, os.path.join(os.getcwd(), name + ".link")))
`

// victimFile is a file of mode 0600 and an old modification time in dir.
func victimFile(t *testing.T, dir string) (string, time.Time) {
	t.Helper()
	p := filepath.Join(dir, "victim")
	if err := os.WriteFile(p, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	return p, old
}

// TestAttackFileMetadata: a confined tool changes no file's mode, times,
// owner or extended attributes outside its writable trees — neither in a
// tree it may only read nor in one it is not granted at all: in the call's
// mount namespace everything but its writable trees is mounted read-only
// (Landlock has no right for these). In its own folder it still does.
// Without the namespaces the same changes land, and sandbox check says
// so; unconfined too (the attack is real).
func TestAttackFileMetadata(t *testing.T) {
	t.Parallel()
	readable := t.TempDir()
	e := newConfinedEnv(t, map[string]Spec{"reader": {Extends: Default, Read: []string{readable}}})
	type victim struct {
		path string
		old  time.Time
	}
	setup := func() map[string]victim {
		vs := map[string]victim{}
		for name, dir := range map[string]string{"ungranted": t.TempDir(), "read-only": readable, "own": e.dir} {
			os.Remove(filepath.Join(e.dir, name+".link"))
			p, old := victimFile(t, dir)
			vs[name] = victim{p, old}
		}
		return vs
	}
	script := func(vs map[string]victim) string {
		m := map[string]string{}
		for name, v := range vs {
			m[name] = v.path
		}
		return strings.Replace(metaAttacks, "VICTIMS", pyDict(m), 1)
	}
	// unchanged reports whether v still has its mode and time.
	unchanged := func(v victim) bool {
		fi, err := os.Stat(v.path)
		return err == nil && fi.Mode().Perm() == 0o600 && fi.ModTime().Equal(v.old)
	}
	attacks := []string{"chmod", "utime", "chown", "setxattr", "fchmod", "link"}
	e.needNamespaces(t)
	for _, profile := range []string{"reader", Offline} {
		vs := setup()
		got := e.attack(t, profile, script(vs))
		for _, name := range []string{"ungranted", "read-only"} {
			for _, a := range attacks {
				// A link between mounts (or out of Landlock's REFER) is EXDEV.
				if r := got[name+" "+a]; !refusedErr(r) && !(a == "link" && r == "EXDEV") {
					t.Errorf("%s: %s %s answered %q, want a refusal", profile, name, a, r)
				}
			}
			if !unchanged(vs[name]) {
				t.Errorf("%s: the %s victim changed", profile, name)
			}
		}
		// In its own folder a tool keeps its files as it likes.
		for _, a := range []string{"chmod", "utime", "fchmod", "link"} {
			if r := got["own "+a]; r != "ok" {
				t.Errorf("%s: own %s answered %q, want ok", profile, a, r)
			}
		}
	}
	// Without the namespaces, Landlock alone lets the mode and times change.
	off := newConfinedEnv(t, map[string]Spec{"reader": {Extends: Default, Read: []string{readable}}}).withoutNamespaces()
	vs := setup()
	if got := off.attack(t, "reader", script(vs)); got["ungranted chmod"] != "ok" || unchanged(vs["ungranted"]) {
		t.Errorf("without namespaces: chmod %q: the script does not attack", got["ungranted chmod"])
	}
	if p := protectionNamed(t, off.sb, Default, "no mode, times, owner or attributes changed"); p.State != StateNotEnforced {
		t.Errorf("without namespaces, sandbox check does not say a tool changes modes outside its trees: %+v", p)
	}
}

// protectionNamed is the line of sandbox check for profile whose name
// starts with prefix (a zero Protection when there is none).
func protectionNamed(t *testing.T, sb *Sandbox, profile, prefix string) Protection {
	t.Helper()
	ps, err := sb.Protections(profile, os.Geteuid())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if strings.HasPrefix(p.Name, prefix) {
			return p
		}
	}
	return Protection{}
}

// TestAttackFileMetadataAsUser is TestAttackFileMetadata for a daemon run
// by an ordinary user.
func TestAttackFileMetadataAsUser(t *testing.T) {
	t.Parallel()
	testuser.Rerun(t, "^TestAttackFileMetadata$")
}
