package sandbox

import (
	"encoding/binary"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFilterAsmLongJumps: a conditional jump over more than 255
// instructions lands where it was aimed, at a return (by a copy) and at
// any other instruction (by a ja), on either branch and both; so do the
// short jumps the trampolines move farther.
func TestFilterAsmLongJumps(t *testing.T) {
	t.Parallel()
	for _, gap := range []int{0, 100, 250, 254, 255, 256, 300, 1300} {
		a := newFilterAsm()
		farRet, farLoad, near, both := a.newLabel(), a.newLabel(), a.newLabel(), a.newLabel()
		a.load(seccompNrOffset)
		// nr 1: far to a return; nr 2: far to a load; nr 3: both branches far.
		a.jump(unix.BPF_JEQ, 1, farRet, near)
		a.place(near)
		n2 := a.newLabel()
		a.jump(unix.BPF_JEQ, 2, farLoad, n2)
		a.place(n2)
		n3 := a.newLabel()
		a.jump(unix.BPF_JEQ, 3, both, n3)
		a.place(n3)
		// nr 100+i answers 1000+i, from a return after all of them.
		answers := make([]label, gap)
		for i := range gap {
			next := a.newLabel()
			answers[i] = a.newLabel()
			a.jump(unix.BPF_JEQ, uint32(100+i), answers[i], next)
			a.place(next)
		}
		a.ret(7) // any other nr
		a.place(both)
		a.load(seccompArgsOffset)
		a.jump(unix.BPF_JEQ, 0, farRet, farLoad)
		a.place(farLoad)
		a.load(seccompArchOffset)
		a.ret(2)
		a.place(farRet)
		a.ret(1)
		for i, l := range answers {
			a.place(l)
			a.ret(uint32(1000 + i))
		}
		prog, err := a.assemble()
		if err != nil {
			t.Fatalf("gap %d: %v", gap, err)
		}
		cases := map[[2]uint64]uint32{{1, 0}: 1, {2, 0}: 2, {3, 0}: 1, {3, 1}: 2, {4, 0}: 7}
		for i := range gap {
			cases[[2]uint64{uint64(100 + i), 0}] = uint32(1000 + i)
		}
		for c, want := range cases {
			got, _, err := filterRun(prog, seccompData(0, uint32(c[0]), [6]uint64{c[1]}), false)
			if err != nil {
				t.Fatalf("gap %d: %v", gap, err)
			}
			if got != want {
				t.Fatalf("gap %d: syscall %d arg %d: %d, want %d", gap, c[0], c[1], got, want)
			}
		}
	}
}

// TestFilterAsmLoads: a load of what the accumulator holds on every path
// to it is left out, and one it holds on some paths only is kept.
func TestFilterAsmLoads(t *testing.T) {
	t.Parallel()
	a := newFilterAsm()
	both, nrOnly, other := a.newLabel(), a.newLabel(), a.newLabel()
	one, two, three := a.newLabel(), a.newLabel(), a.newLabel()
	a.load(seccompArchOffset)
	a.jump(unix.BPF_JEQ, 7, both, other) // arch 7: to both with the arch loaded
	a.place(other)
	a.load(seccompNrOffset)
	a.jump(unix.BPF_JEQ, 99, nrOnly, both) // nr 99: to nrOnly with the number loaded
	a.place(both)
	a.load(seccompNrOffset) // kept: the arch on one path
	a.jump(unix.BPF_JEQ, 1, one, nrOnly)
	a.place(nrOnly)
	a.load(seccompNrOffset) // left out: the number on every path
	a.jump(unix.BPF_JGE, 50, two, three)
	for i, l := range []label{one, two, three} {
		a.place(l)
		a.ret(uint32(i + 1))
	}
	prog, err := a.assemble()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(prog) / sockFilterSize; n != 10 {
		t.Errorf("%d instructions, want 10", n)
	}
	for _, c := range []struct{ arch, nr, want uint32 }{{7, 1, 1}, {7, 60, 2}, {1, 99, 2}, {1, 5, 3}, {1, 1, 1}} {
		if got, _, err := filterRun(prog, seccompData(c.arch, c.nr, [6]uint64{}), false); err != nil || got != c.want {
			t.Errorf("arch %d nr %d: %d, %v, want %d", c.arch, c.nr, got, err, c.want)
		}
	}
}

// filterRun runs prog, struct sock_filter in this machine's byte order, as
// the kernel runs a seccomp filter, over data (seccompData): its answer
// and how many instructions it ran. With untilArgs it stops, answering 0,
// at the first load of anything but the syscall number or architecture,
// as the kernel does when it looks for syscalls it may always allow. Only
// the instructions the filter is made of are known.
func filterRun(prog []byte, data []byte, untilArgs bool) (ret uint32, steps int, err error) {
	n := len(prog) / sockFilterSize
	if n == 0 || len(prog)%sockFilterSize != 0 || n > unix.BPF_MAXINSNS {
		return 0, 0, fmt.Errorf("a program of %d bytes", len(prog))
	}
	var acc uint32
	for pc := 0; pc < n; pc++ {
		b := prog[pc*sockFilterSize:]
		code, jt, jf, k := binary.NativeEndian.Uint16(b), int(b[2]), int(b[3]), binary.NativeEndian.Uint32(b[4:])
		steps++
		jump := func(cond bool) {
			if cond {
				pc += jt
			} else {
				pc += jf
			}
		}
		switch code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if k%4 != 0 || k+4 > uint32(len(data)) {
				return 0, steps, fmt.Errorf("load of %d at %d", k, pc)
			}
			if untilArgs && k >= seccompArgsOffset {
				return 0, steps, nil
			}
			acc = binary.BigEndian.Uint32(data[k:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= k
		case unix.BPF_JMP | unix.BPF_JA:
			pc += int(k)
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			jump(acc == k)
		case unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K:
			jump(acc > k)
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			jump(acc >= k)
		case unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			jump(acc&k != 0)
		case unix.BPF_RET | unix.BPF_K:
			return k, steps, nil
		default:
			return 0, steps, fmt.Errorf("instruction %#x at %d", code, pc)
		}
		if pc+1 >= n {
			return 0, steps, fmt.Errorf("a jump past the end, at %d", pc)
		}
	}
	return 0, steps, fmt.Errorf("ran off the end")
}

// seccompData is a struct seccomp_data as the BPF machines here read it:
// each 32-bit load is big-endian there, in the machine's own order in the
// kernel.
func seccompData(auditArch, nr uint32, args [6]uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], auditArch)
	for i, a := range args {
		lo, hi := argWords(uint32(i))
		binary.BigEndian.PutUint32(b[lo:], uint32(a))
		binary.BigEndian.PutUint32(b[hi:], uint32(a>>32))
	}
	return b
}

// TestFilterAsmMisuse: a program the assembler cannot make right is an
// error, not a program: a label placed twice or never, a jump back, an
// end that is not a return.
func TestFilterAsmMisuse(t *testing.T) {
	t.Parallel()
	for name, build := range map[string]func(a *filterAsm){
		"placed twice": func(a *filterAsm) {
			l := a.newLabel()
			a.place(l)
			a.load(seccompNrOffset)
			a.place(l)
			a.ret(0)
		},
		"never placed": func(a *filterAsm) {
			a.load(seccompNrOffset)
			a.jump(unix.BPF_JEQ, 1, a.newLabel(), a.newLabel())
			a.ret(0)
		},
		"a jump back": func(a *filterAsm) {
			l, m := a.newLabel(), a.newLabel()
			a.place(l)
			a.load(seccompNrOffset)
			a.jump(unix.BPF_JEQ, 1, l, m)
			a.place(m)
			a.ret(0)
		},
		"no return at the end": func(a *filterAsm) {
			a.ret(0)
			a.load(seccompNrOffset)
		},
	} {
		a := newFilterAsm()
		build(a)
		if prog, err := a.assemble(); err == nil {
			t.Errorf("%s: assembled, %d bytes", name, len(prog))
		}
	}
}
