package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
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
// nomatch. An argument's 64 bits are compared in two halves; sets that
// each compare one argument with a value of the same high half are one
// test of that half and one compare per value.
func (r filterRule) emit(a *filterAsm, match, nomatch label) error {
	for _, set := range r.sets {
		for _, c := range set {
			if c.Argument > 5 {
				return fmt.Errorf("syscall filter: %s: argument %d", r.name, c.Argument)
			}
		}
	}
	for sets := r.sets; len(sets) > 0; {
		n := equalRun(sets)
		next := nomatch // the sets after these
		if n < len(sets) {
			next = a.newLabel()
		}
		if n > 1 {
			emitEqualRun(a, sets[:n], match, next)
		} else if err := emitSet(a, sets[0], match, next); err != nil {
			return fmt.Errorf("syscall filter: %s: %w", r.name, err)
		}
		if sets = sets[n:]; len(sets) > 0 {
			a.place(next)
		}
	}
	return nil
}

// equalRun is how many sets, from the first, are each one Equal condition
// on the first's argument with a value of the same high half; at least 1.
func equalRun(sets []seccomp.ArgumentConditions) int {
	is := func(set seccomp.ArgumentConditions) bool {
		return len(set) == 1 && set[0].Operation == seccomp.Equal && set[0].Argument == sets[0][0].Argument &&
			set[0].Value>>32 == sets[0][0].Value>>32
	}
	n := 1
	for n < len(sets) && is(sets[0]) && is(sets[n]) {
		n++
	}
	return n
}

// emitEqualRun goes to match when the argument equals one of the values
// of sets (an equalRun), else to nomatch.
func emitEqualRun(a *filterAsm, sets []seccomp.ArgumentConditions, match, nomatch label) {
	c := sets[0][0]
	loOff, hiOff := argWords(c.Argument)
	sameHigh := a.newLabel()
	a.load(hiOff)
	a.jump(unix.BPF_JEQ, uint32(c.Value>>32), sameHigh, nomatch)
	a.place(sameHigh)
	a.load(loOff)
	for i, set := range sets {
		if i == len(sets)-1 {
			a.jump(unix.BPF_JEQ, uint32(set[0].Value), match, nomatch)
			break
		}
		other := a.newLabel()
		a.jump(unix.BPF_JEQ, uint32(set[0].Value), match, other)
		a.place(other)
	}
}

// emitSet goes to yes when every condition of set holds, else to no.
func emitSet(a *filterAsm, set seccomp.ArgumentConditions, yes, no label) error {
	if len(set) == 0 {
		a.goTo(yes)
	}
	for i := 0; i < len(set); {
		n, bits, mask := lowHalfIs(set[i:])
		holds := yes // the next condition
		if i+max(n, 1) < len(set) {
			holds = a.newLabel()
		}
		if n > 0 {
			loOff, _ := argWords(set[i].Argument)
			a.load(loOff)
			if mask != math.MaxUint32 {
				a.and(mask)
			}
			a.jump(unix.BPF_JEQ, bits, holds, no)
			i += n
		} else {
			if err := emitCondition(a, set[i], holds, no); err != nil {
				return err
			}
			i++
		}
		if i < len(set) {
			a.place(holds)
		}
	}
	return nil
}

// lowHalfIs finds, at the start of cs, conditions on one argument that
// together say its low half under mask is bits: BitsSet conditions of one
// low bit each, then a BitsNotSet of low bits (low32Is, typeIs). n is how
// many, 0 if they are not there.
func lowHalfIs(cs []seccomp.Condition) (n int, bits, mask uint32) {
	low := func(c seccomp.Condition, op seccomp.Operation) bool {
		return c.Argument == cs[0].Argument && c.Operation == op && c.Value>>32 == 0
	}
	for n < len(cs) && low(cs[n], seccomp.BitsSet) && cs[n].Value != 0 && cs[n].Value&(cs[n].Value-1) == 0 {
		bits |= uint32(cs[n].Value)
		n++
	}
	if n == 0 || n == len(cs) || !low(cs[n], seccomp.BitsNotSet) || bits&uint32(cs[n].Value) != 0 {
		return 0, 0, 0
	}
	return n + 1, bits, bits | uint32(cs[n].Value)
}

// emitCondition goes to yes when c (on an argument from 0 to 5) holds,
// else to no, with the library's meaning of each operation on the 64-bit
// argument.
func emitCondition(a *filterAsm, c seccomp.Condition, yes, no label) error {
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
	case seccomp.BitsSet, seccomp.BitsNotSet: // a & v != 0, and its negation
		if c.Operation == seccomp.BitsNotSet {
			yes, no = no, yes
		}
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
	default:
		return fmt.Errorf("operation %s not compiled", c.Operation)
	}
	return nil
}
