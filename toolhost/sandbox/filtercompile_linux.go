package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// compileFilter makes rules one program for the architecture info: a
// syscall of another architecture's calling convention (on x86-64,
// i386's int 0x80 and x32's numbers) answers ENOSYS, since the rules are
// by this one's numbers (32-bit programs cannot run confined); the others
// are found by a binary search over the syscall numbers, so that a
// syscall no rule names runs a handful of jumps whatever the number of
// rules. The kernel runs the program over every syscall number when it
// loads it (to find those it may allow without running it again): the
// cost of loading grows with that path, and of compiling with the
// program's length; the arguments of a syscall with rules are checked
// once the search found it.
func compileFilter(info *arch.Info, rules []filterRule) ([]byte, error) {
	a := newFilterAsm()
	rets := map[seccomp.Action]label{}
	var retOrder []seccomp.Action
	retOf := func(action seccomp.Action) label {
		l, ok := rets[action]
		if !ok {
			l = a.newLabel()
			rets[action] = l
			retOrder = append(retOrder, action)
		}
		return l
	}
	allow, enosys := retOf(seccomp.ActionAllow), retOf(errnoAction(unix.ENOSYS))

	byNr := map[uint32]filterRule{}
	for _, r := range rules {
		nr, ok := info.SyscallNames[r.name]
		if !ok {
			continue // not every architecture has each
		}
		if _, dup := byNr[uint32(nr)]; dup {
			return nil, fmt.Errorf("syscall filter: two rules for %s", r.name)
		}
		byNr[uint32(nr)] = r
	}
	nrs := slices.Sorted(maps.Keys(byNr))

	// The syscall numbers from each span's from up to the next span's
	// go to its label: a rule's numbers, and the gaps between them.
	type span struct {
		from uint32
		to   label
	}
	spans := []span{{0, allow}}
	add := func(from uint32, to label) {
		if n := len(spans); spans[n-1].from == from {
			spans = spans[:n-1]
		}
		if n := len(spans); n == 0 || spans[n-1].to != to {
			spans = append(spans, span{from, to})
		}
	}
	type body struct {
		at   label
		rule filterRule
	}
	var bodies []body
	for _, nr := range nrs {
		r := byNr[nr]
		to := retOf(r.action)
		if len(r.sets) > 0 {
			to = a.newLabel()
			bodies = append(bodies, body{to, r})
		}
		add(nr, to)
		add(nr+1, allow)
	}
	if info.ID == arch.X86_64.ID {
		x32 := uint32(arch.X32.SeccompMask)
		if len(nrs) > 0 && nrs[len(nrs)-1] >= x32 {
			return nil, errors.New("syscall filter: a syscall number in x32's range")
		}
		add(x32, enosys)
	}

	native := a.newLabel()
	a.load(seccompArchOffset)
	a.jump(unix.BPF_JEQ, uint32(info.ID), native, enosys)
	a.place(native)
	a.load(seccompNrOffset)
	var search func(sp []span, at label)
	start := func(sp []span) label {
		if len(sp) == 1 {
			return sp[0].to
		}
		return a.newLabel()
	}
	search = func(sp []span, at label) {
		a.place(at)
		mid := len(sp) / 2
		below, above := start(sp[:mid]), start(sp[mid:])
		a.jump(unix.BPF_JGE, sp[mid].from, above, below)
		if mid > 1 {
			search(sp[:mid], below)
		}
		if len(sp)-mid > 1 {
			search(sp[mid:], above)
		}
	}
	if root := start(spans); len(spans) > 1 {
		search(spans, root)
	} else {
		a.goTo(root)
	}
	for _, b := range bodies {
		a.place(b.at)
		if err := b.rule.emit(a, retOf(b.rule.action), allow); err != nil {
			return nil, err
		}
	}
	for _, action := range retOrder {
		a.place(rets[action])
		a.ret(uint32(action))
	}
	return a.assemble()
}

// The offsets of seccomp_data's fields.
const (
	seccompNrOffset   = 0
	seccompArchOffset = 4
	seccompArgsOffset = 16
)

// argWords are the offsets of argument n's low and high halves.
func argWords(n uint32) (lo, hi uint32) {
	lo, hi = seccompArgsOffset+8*n, seccompArgsOffset+8*n+4
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 { // big-endian: the high half first
		lo, hi = hi, lo
	}
	return lo, hi
}

// emit goes to match when the arguments match one of r's sets, else to
// nomatch. An argument's 64 bits are compared in two halves.
func (r filterRule) emit(a *filterAsm, match, nomatch label) error {
	for j, set := range r.sets {
		next := nomatch // the next set
		if j < len(r.sets)-1 {
			next = a.newLabel()
		}
		if len(set) == 0 {
			a.goTo(match)
		}
		for i, c := range set {
			holds := match // the next condition
			if i < len(set)-1 {
				holds = a.newLabel()
			}
			if err := emitCondition(a, c, holds, next); err != nil {
				return fmt.Errorf("syscall filter: %s: %w", r.name, err)
			}
			if i < len(set)-1 {
				a.place(holds)
			}
		}
		if j < len(r.sets)-1 {
			a.place(next)
		}
	}
	return nil
}

// emitCondition goes to yes when c holds, else to no, with the library's
// meaning of each operation on the 64-bit argument.
func emitCondition(a *filterAsm, c seccomp.Condition, yes, no label) error {
	if c.Argument > 5 {
		return fmt.Errorf("argument %d", c.Argument)
	}
	loOff, hiOff := argWords(c.Argument)
	hi, lo := uint32(c.Value>>32), uint32(c.Value)
	next := func() label { return a.newLabel() }
	switch c.Operation {
	case seccomp.Equal: // hi == v.hi && lo == v.lo
		n := next()
		a.load(hiOff)
		a.jump(unix.BPF_JEQ, hi, n, no)
		a.place(n)
		a.load(loOff)
		a.jump(unix.BPF_JEQ, lo, yes, no)
	case seccomp.GreaterThan: // hi > v.hi || hi == v.hi && lo > v.lo
		n, m := next(), next()
		a.load(hiOff)
		a.jump(unix.BPF_JGT, hi, yes, n)
		a.place(n)
		a.jump(unix.BPF_JEQ, hi, m, no)
		a.place(m)
		a.load(loOff)
		a.jump(unix.BPF_JGT, lo, yes, no)
	case seccomp.BitsSet: // a & v != 0
		if hi != 0 {
			n := next()
			a.load(hiOff)
			a.jump(unix.BPF_JSET, hi, yes, n)
			a.place(n)
		}
		if lo != 0 {
			a.load(loOff)
			a.jump(unix.BPF_JSET, lo, yes, no)
		} else {
			a.goTo(no)
		}
	case seccomp.BitsNotSet: // a & v == 0
		if hi != 0 {
			n := next()
			a.load(hiOff)
			a.jump(unix.BPF_JSET, hi, no, n)
			a.place(n)
		}
		if lo != 0 {
			a.load(loOff)
			a.jump(unix.BPF_JSET, lo, no, yes)
		} else {
			a.goTo(yes)
		}
	default:
		return fmt.Errorf("operation %s not compiled", c.Operation)
	}
	return nil
}
