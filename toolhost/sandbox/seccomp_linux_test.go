package sandbox

import (
	"encoding/binary"
	"fmt"
	"testing"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestChainedFilterAnswersAsStacked: the one program a launcher loads
// answers every syscall as the separate programs loaded one over the other
// would (the kernel's rule: the answer of highest precedence, among equals
// the last loaded's): for each syscall number of this architecture and of
// x32, the same under another architecture, and, for the syscalls whose
// arguments are checked, arguments on and around every value checked
// (high bits included), under each set of network rules.
func TestChainedFilterAnswersAsStacked(t *testing.T) {
	t.Parallel()
	info, err := arch.GetInfo("")
	if err != nil {
		t.Skipf("no syscall table for this architecture: %v", err)
	}
	var argValues []uint64
	for _, v := range []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 16, 17, 41, 132, 262, 0xf,
		unix.TIOCSTI, unix.TIOCLINUX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC, unix.SOCK_DGRAM | unix.SOCK_NONBLOCK,
		unix.CLONE_NEWUSER, unix.CLONE_NEWNS, unix.CLONE_NEWNET, unix.CLONE_NEWPID, unix.CLONE_NEWTIME,
		unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD, 0xffffffff} {
		argValues = append(argValues, v, v|1<<32)
	}
	checked := map[int]bool{}
	for _, name := range []string{"clone", "unshare", "ioctl", "socket", "socketpair", "sendmsg", "chmod", "fchmodat", "open"} {
		if nr, ok := info.SyscallNames[name]; ok {
			checked[nr] = true
		}
	}
	for _, pol := range []*policy{{}, {NetDeny: true}, {Ports: []uint16{443}}} {
		progs, err := pol.filterPrograms()
		if err != nil {
			t.Fatal(err)
		}
		stacked := make([]*bpf.VM, len(progs))
		for i, prog := range progs {
			if stacked[i], err = bpf.NewVM(prog); err != nil {
				t.Fatal(err)
			}
		}
		chained, err := bpf.NewVM(chain(progs))
		if err != nil {
			t.Fatal(err)
		}
		n, refused := 0, 0
		try := func(auditArch uint32, nr int, args [3]uint64) {
			n++
			data := seccompData(auditArch, uint32(nr), args)
			want := uint32(seccomp.ActionAllow)
			for i := len(stacked) - 1; i >= 0; i-- { // the last loaded runs first
				got, err := stacked[i].Run(data)
				if err != nil {
					t.Fatal(err)
				}
				if int32(uint32(got)&unix.SECCOMP_RET_ACTION_FULL) < int32(want&unix.SECCOMP_RET_ACTION_FULL) {
					want = uint32(got)
				}
			}
			got, err := chained.Run(data)
			if err != nil {
				t.Fatal(err)
			}
			if uint32(got) != want {
				t.Fatalf("%s: arch %#x syscall %d args %#x: chained %#x, stacked %#x", rules(pol), auditArch, nr, args, got, want)
			}
			if want != uint32(seccomp.ActionAllow) {
				refused++
			}
		}
		for _, a := range []uint32{uint32(info.ID), uint32(arch.I386.ID)} {
			for nr := 0; nr < 600; nr++ {
				try(a, nr, [3]uint64{})
				try(a, nr|0x40000000, [3]uint64{})
				if !checked[nr] || a != uint32(info.ID) {
					continue
				}
				for _, a0 := range argValues {
					for _, a1 := range argValues {
						for _, a2 := range []uint64{0, 4, 6, 17, 132, 1 << 32, unix.MSG_FASTOPEN} {
							try(a, nr, [3]uint64{a0, a1, a2})
						}
					}
				}
			}
		}
		if refused == 0 || refused == n {
			t.Fatalf("%s: %d of %d refused: the cases do not tell the programs apart", rules(pol), refused, n)
		}
		t.Logf("%s: %d syscalls answered alike, %d of them refused", rules(pol), n, refused)
	}
}

func rules(p *policy) string {
	return fmt.Sprintf("net_deny=%v ports=%v", p.NetDeny, p.Ports)
}

// seccompData is a struct seccomp_data as the BPF machine reads it: each
// 32-bit load is big-endian there, in the machine's own order in the kernel.
func seccompData(auditArch, nr uint32, args [3]uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], auditArch)
	for i, a := range args {
		lo, hi := 16+8*i, 20+8*i
		if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 { // big-endian: the high half first
			lo, hi = hi, lo
		}
		binary.BigEndian.PutUint32(b[lo:], uint32(a))
		binary.BigEndian.PutUint32(b[hi:], uint32(a>>32))
	}
	return b
}
