package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"golang.org/x/sys/unix"
)

// A small assembler of classic BPF for the syscall filter: forward jumps
// to labels, a conditional jump farther than its 8-bit offsets reach taken
// through a trampoline placed right after it, and loads of what the
// accumulator already holds left out.

// label names an instruction a jump goes to; 0 is none.
type label int

// asmInsn is an instruction whose jumps are still labels.
type asmInsn struct {
	code   uint16
	k      uint32
	jt, jf label // conditional jumps go to one or the other; ja to jt
}

// stateUnknown: the accumulator holds nothing a load could reuse.
const stateUnknown = -1

type filterAsm struct {
	insns []asmInsn
	// at: label → the index of its instruction, once placed.
	at []int
	// held: label → what each jump to it leaves in the accumulator (the
	// offset of seccomp_data it loaded last, or stateUnknown).
	held [][]int
	// acc is what the accumulator holds at the current point, and reach
	// whether the instruction before falls through to it.
	acc   int
	reach bool
	// err is the first misuse: a label placed twice.
	err error
}

func newFilterAsm() *filterAsm {
	return &filterAsm{at: []int{-1}, held: [][]int{nil}, acc: stateUnknown, reach: true}
}

func (a *filterAsm) newLabel() label {
	a.at = append(a.at, -1)
	a.held = append(a.held, nil)
	return label(len(a.at) - 1)
}

// place puts l at the next instruction. Every jump to l comes before it:
// the accumulator there holds what all of them and the fall-through agree on.
func (a *filterAsm) place(l label) {
	if n := len(a.insns); n > 0 && a.insns[n-1].code == unix.BPF_JMP|unix.BPF_JA && a.insns[n-1].jt == l {
		a.insns = a.insns[:n-1] // a jump to the next instruction
	}
	if a.at[l] >= 0 && a.err == nil {
		a.err = fmt.Errorf("syscall filter: label %d placed twice", l)
	}
	a.at[l] = len(a.insns)
	states := a.held[l]
	if a.reach {
		states = append(states, a.acc)
	}
	a.acc, a.reach = stateUnknown, true
	for i, s := range states {
		if i > 0 && s != a.acc {
			a.acc = stateUnknown
			break
		}
		a.acc = s
	}
}

func (a *filterAsm) jumpsTo(l label) {
	a.held[l] = append(a.held[l], a.acc)
}

// load puts the 32-bit word at off of seccomp_data in the accumulator.
func (a *filterAsm) load(off uint32) {
	if a.reach && a.acc == int(off) {
		return
	}
	a.insns = append(a.insns, asmInsn{code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: off})
	a.acc = int(off)
}

// and keeps the accumulator's bits that are in k.
func (a *filterAsm) and(k uint32) {
	a.insns = append(a.insns, asmInsn{code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, k: k})
	a.acc = stateUnknown
}

// jump goes to jt when the accumulator compared by op (BPF_JEQ, BPF_JGT,
// BPF_JGE, BPF_JSET) with k holds, else to jf.
func (a *filterAsm) jump(op uint16, k uint32, jt, jf label) {
	a.jumpsTo(jt)
	a.jumpsTo(jf)
	a.insns = append(a.insns, asmInsn{code: unix.BPF_JMP | op | unix.BPF_K, k: k, jt: jt, jf: jf})
	a.reach = false
}

// goTo jumps to l whatever the accumulator holds.
func (a *filterAsm) goTo(l label) {
	a.jumpsTo(l)
	a.insns = append(a.insns, asmInsn{code: unix.BPF_JMP | unix.BPF_JA, jt: l})
	a.reach = false
}

func (a *filterAsm) ret(v uint32) {
	a.insns = append(a.insns, asmInsn{code: unix.BPF_RET | unix.BPF_K, k: v})
	a.reach = false
}

func isCondJump(in asmInsn) bool {
	return in.code&0x07 == unix.BPF_JMP && in.code&0xf0 != unix.BPF_JA
}

// assemble resolves the labels into struct sock_filter, in this machine's
// byte order. A conditional jump whose target is more than 255
// instructions ahead goes to a trampoline inserted right after it: a copy
// of the target when that is a return, else a ja, whose offset has 32
// bits. Nothing falls through into a conditional jump's next instruction,
// so an insertion there changes no other path; it moves later
// instructions, so jumps are checked again until all reach.
func (a *filterAsm) assemble() ([]byte, error) {
	if a.err != nil {
		return nil, a.err
	}
	insns := slices.Clone(a.insns)
	at := slices.Clone(a.at)
	if len(insns) == 0 || insns[len(insns)-1].code != unix.BPF_RET|unix.BPF_K {
		return nil, errors.New("syscall filter: the program does not end in a return")
	}
	for l, i := range at {
		if l > 0 && (i < 0 || i >= len(insns)) {
			return nil, fmt.Errorf("syscall filter: label %d placed after the last instruction or not at all", l)
		}
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(insns); i++ {
			if !isCondJump(insns[i]) {
				continue
			}
			for branch := range 2 {
				l := insns[i].jt
				if branch == 1 {
					l = insns[i].jf
				}
				if at[l] <= i {
					return nil, fmt.Errorf("syscall filter: a jump back, at %d", i)
				}
				if at[l]-i-1 <= math.MaxUint8 {
					continue
				}
				tramp := asmInsn{code: unix.BPF_JMP | unix.BPF_JA, jt: l}
				if target := insns[at[l]]; target.code == unix.BPF_RET|unix.BPF_K {
					tramp = target
				}
				insns = slices.Insert(insns, i+1, tramp)
				for m := range at {
					if at[m] > i {
						at[m]++
					}
				}
				at = append(at, i+1)
				if branch == 0 {
					insns[i].jt = label(len(at) - 1)
				} else {
					insns[i].jf = label(len(at) - 1)
				}
				changed = true
			}
		}
	}
	if len(insns) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("syscall filter: %d instructions, more than %d", len(insns), unix.BPF_MAXINSNS)
	}
	out := make([]byte, 0, sockFilterSize*len(insns))
	for i, in := range insns {
		var jt, jf uint8
		k := in.k
		switch {
		case in.code == unix.BPF_JMP|unix.BPF_JA:
			if at[in.jt] <= i {
				return nil, fmt.Errorf("syscall filter: a jump back, at %d", i)
			}
			k = uint32(at[in.jt] - i - 1)
		case isCondJump(in):
			jt, jf = uint8(at[in.jt]-i-1), uint8(at[in.jf]-i-1)
		}
		out = binary.NativeEndian.AppendUint16(out, in.code)
		out = append(out, jt, jf)
		out = binary.NativeEndian.AppendUint32(out, k)
	}
	return out, nil
}
