package sandbox

import (
	"runtime"
	"testing"

	"github.com/vcpnode/vcpnode/internal/testuser"
)

// compatAttacks make syscalls through i386's calling convention (int 0x80,
// i386's numbers), which a 64-bit process on x86-64 may use: a filter that
// checked only x86-64's numbers would let each through.
const compatAttacks = `
import mmap, struct
def sc32(nr, a1=0, a2=0):
    code = (b"\x53" + b"\xb8" + struct.pack("<I", nr) + b"\xbb" + struct.pack("<I", a1) +
            b"\xb9" + struct.pack("<I", a2) + b"\xcd\x80" + b"\x5b" + b"\xc3")
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(code)
    r = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()
    if r < 0:
        raise OSError(-r, "int 0x80")
    return r
try_("i386 getpid", lambda: sc32(20))
try_("i386 unshare user", lambda: sc32(310, 0x10000000))
try_("i386 clone3", lambda: sc32(435, 0, 0))
try_("i386 keyctl", lambda: sc32(288, 0, 0))
try_("i386 ptrace", lambda: sc32(26, 16, os.getppid()))
`

// TestAttackCompatSyscalls: under every confining profile the syscalls of
// i386's calling convention are refused (ENOSYS) — those the filter
// refuses by their x86-64 number included —, where unconfined they run.
func TestAttackCompatSyscalls(t *testing.T) {
	t.Parallel()
	if runtime.GOARCH != "amd64" {
		t.Skipf("the i386 calling convention is x86-64's (this is %s)", runtime.GOARCH)
	}
	e := newConfinedEnv(t, nil)
	open := e.attack(t, None, compatAttacks)
	if open["i386 getpid"] != "ok" {
		t.Skipf("this kernel runs no i386 syscalls (int 0x80 getpid: %s)", open["i386 getpid"])
	}
	if open["i386 unshare user"] != "ok" {
		t.Logf("unconfined, i386 unshare(CLONE_NEWUSER) answers %s here", open["i386 unshare user"])
	}
	for _, profile := range []string{Default, Offline} {
		got := e.attack(t, profile, compatAttacks)
		for _, name := range []string{"i386 getpid", "i386 unshare user", "i386 clone3", "i386 keyctl", "i386 ptrace"} {
			if got[name] != "ENOSYS" {
				t.Errorf("%s: %s answered %q, want ENOSYS", profile, name, got[name])
			}
		}
	}
}

// TestAttackCompatSyscallsAsUser is TestAttackCompatSyscalls for a daemon
// run by an ordinary user.
func TestAttackCompatSyscallsAsUser(t *testing.T) {
	t.Parallel()
	testuser.Rerun(t, "^TestAttackCompatSyscalls$")
}
