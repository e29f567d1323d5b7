package sandbox

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// filterProfiles are the sets of network rules a filter depends on.
var filterProfiles = []*policy{{}, {NetDeny: true}, {Ports: []uint16{443}}}

func rules(p *policy) string {
	return fmt.Sprintf("net_deny=%v ports=%v", p.NetDeny, p.Ports)
}

// TestFilterAnswersAsLibraryPrograms: the program a launcher loads
// answers every syscall as the same rules assembled by the library, under
// each set of network rules (sameAnswers).
func TestFilterAnswersAsLibraryPrograms(t *testing.T) {
	t.Parallel()
	info := nativeArch(t)
	for _, pol := range filterProfiles {
		sameAnswers(t, info, rules(pol), pol.filterShape().filterRules())
	}
}

// TestFilterConditionsAnswerAsLibrary: conditions of every operation the
// compiler knows, with values in the high half and the low, and the
// shapes it compiles shorter (one argument equal to one of several
// values, high halves alike or not; a low half under a mask, with and
// without all bits, and shapes close to it that are not), answer as the
// library's programs answer.
func TestFilterConditionsAnswerAsLibrary(t *testing.T) {
	t.Parallel()
	info := nativeArch(t)
	c := func(arg uint32, op seccomp.Operation, v uint64) seccomp.Condition {
		return seccomp.Condition{Argument: arg, Operation: op, Value: v}
	}
	eq := func(arg uint32, v uint64) seccomp.ArgumentConditions {
		return seccomp.ArgumentConditions{c(arg, seccomp.Equal, v)}
	}
	deny := func(name string, sets ...seccomp.ArgumentConditions) filterRule {
		return filterRule{name: name, action: errnoAction(unix.EPERM), sets: sets}
	}
	sameAnswers(t, info, "shapes", []filterRule{
		deny("read", eq(0, 5), eq(0, 7), eq(0, 1<<32|9), eq(0, 1<<32|11), eq(1, 3), eq(0, 13)),
		deny("write", seccomp.ArgumentConditions{c(0, seccomp.GreaterThan, 1<<32|4), c(1, seccomp.Equal, 1<<33)},
			seccomp.ArgumentConditions{c(2, seccomp.BitsSet, 1<<40|1), c(2, seccomp.BitsNotSet, 1<<41|2)},
			seccomp.ArgumentConditions{c(3, seccomp.BitsSet, 1<<40), c(4, seccomp.BitsNotSet, 1<<41), c(5, seccomp.BitsSet, 0)}),
		deny("ioctl", and(low32Is(1, 0x5412)), and(low32Is(0, 0)), and(low32Is(2, 0x80000001), typeIs(5))),
		deny("fcntl", seccomp.ArgumentConditions{c(1, seccomp.BitsSet, 4), c(1, seccomp.BitsSet, 8), c(1, seccomp.BitsNotSet, 4)},
			seccomp.ArgumentConditions{c(1, seccomp.BitsSet, 6), c(1, seccomp.BitsNotSet, 1)},
			seccomp.ArgumentConditions{c(1, seccomp.BitsSet, 16), c(2, seccomp.BitsNotSet, 1)},
			seccomp.ArgumentConditions{c(1, seccomp.BitsSet, 32), c(1, seccomp.BitsNotSet, 1<<32|1)}),
		{name: "getpid", action: errnoAction(unix.ENOSYS)},
		{name: "close", action: errnoAction(unix.EBADF), sets: []seccomp.ArgumentConditions{eq(0, 1<<63)}},
	})
}

// sameAnswers: rs compiled answers every syscall as rs assembled by the
// library, one program per syscall with arguments rules, loaded one over
// the other (the kernel's rule: the answer of highest precedence, among
// equals the last loaded's), run by the library's BPF machine while the
// compiled program runs in filterRun: for every syscall number of this
// architecture, of x32 and of i386, under no architecture the kernel has,
// and for each syscall with argument rules, arguments on, around and
// between every value a rule compares (high halves included) and random
// ones.
func sameAnswers(t *testing.T, info *arch.Info, what string, rs []filterRule) {
	ref := libraryVMs(t, libraryFilter(t, info, rs))
	prog, err := compileFilter(info, rs)
	if err != nil {
		t.Fatal(err)
	}
	n, refused := 0, 0
	try := func(auditArch, nr uint32, args [6]uint64) bool {
		n++
		data := seccompData(auditArch, nr, args)
		want := stackedVerdict(t, ref, data)
		got, _, err := filterRun(prog, data, false)
		if err != nil {
			t.Fatalf("%s: arch %#x syscall %d args %#x: %v", what, auditArch, nr, args, err)
		}
		if got != want {
			t.Fatalf("%s: arch %#x syscall %d args %#x: compiled %#x, library %#x", what, auditArch, nr, args, got, want)
		}
		if want != uint32(seccomp.ActionAllow) {
			refused++
			return true
		}
		return false
	}
	for _, a := range []uint32{uint32(info.ID), uint32(arch.I386.ID), 0, 0xffffffff} {
		for nr := range uint32(1024) {
			try(a, nr, [6]uint64{})
			try(a, nr|0x40000000, [6]uint64{})
		}
		for _, nr := range []uint32{0x3fffffff, 0x7fffffff, 0x80000000, 0xffffffff} {
			try(a, nr, [6]uint64{})
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, r := range rs {
		nr, ok := info.SyscallNames[r.name]
		if len(r.sets) == 0 || !ok {
			continue
		}
		pools := argPools(r)
		var yes, no int
		tally := func(refused bool) {
			if refused {
				yes++
			} else {
				no++
			}
		}
		// Every combination of the values a rule compares, and random
		// picks among them and in all 64 bits.
		args := [6]uint64{}
		var walk func(i int)
		walk = func(i int) {
			if i == len(args) {
				tally(try(uint32(info.ID), uint32(nr), args))
				return
			}
			for _, v := range pools[i] {
				args[i] = v
				walk(i + 1)
			}
		}
		picks := 1000
		if combos(pools) <= 50_000 {
			walk(0)
		} else {
			picks = 20_000
		}
		for range picks {
			for i, pool := range pools {
				args[i] = pool[rnd.IntN(len(pool))]
				if len(pool) > 1 && rnd.IntN(4) == 0 {
					args[i] = rnd.Uint64()
				}
			}
			tally(try(uint32(info.ID), uint32(nr), args))
		}
		if yes == 0 || no == 0 {
			t.Errorf("%s: %s: %d refused, %d allowed: the cases do not tell the rules apart", what, r.name, yes, no)
		}
	}
	t.Logf("%s: %d instructions, %d syscalls answered alike, %d of them refused", what, len(prog)/sockFilterSize, n, refused)
}

// argPools are, for each argument, the values to try for r: those each
// condition compares, their neighbours, each with a high half, each with
// one of its bits cleared and with one more set.
func argPools(r filterRule) [6][]uint64 {
	var pools [6][]uint64
	for i := range pools {
		pools[i] = []uint64{0}
	}
	for _, set := range r.sets {
		for _, c := range set {
			v := c.Value
			vs := []uint64{v, v - 1, v + 1, ^v, uint64(uint32(v)), uint64(^uint32(v)), v | 1<<32, v | 1<<63, v << 32}
			for b := v; b != 0; b &= b - 1 {
				vs = append(vs, v&^(b&-b))
			}
			for b := range 32 {
				if v&(1<<b) == 0 {
					vs = append(vs, v|1<<b)
					break
				}
			}
			pools[c.Argument] = append(pools[c.Argument], vs...)
		}
	}
	for i := range pools {
		slices.Sort(pools[i])
		pools[i] = slices.Compact(pools[i])
	}
	return pools
}

func combos(pools [6][]uint64) int {
	n := 1
	for _, p := range pools {
		n *= len(p)
	}
	return n
}

// TestFilterSearchIsShort: for every syscall number, of this architecture
// and of i386, the program decides (returns, or loads an argument to
// check) within a few instructions, so loading it costs the kernel little
// (it runs the program over each number to learn which it may allow
// without running it) and syscalls without rules pass quickly.
func TestFilterSearchIsShort(t *testing.T) {
	t.Parallel()
	info := nativeArch(t)
	for _, pol := range filterProfiles {
		prog, err := compileFilter(info, pol.filterShape().filterRules())
		if err != nil {
			t.Fatal(err)
		}
		longest := 0
		for _, a := range []uint32{uint32(info.ID), uint32(arch.I386.ID)} {
			for nr := range uint32(1024) {
				_, steps, err := filterRun(prog, seccompData(a, nr, [6]uint64{}), true)
				if err != nil {
					t.Fatal(err)
				}
				longest = max(longest, steps)
			}
		}
		// The arch check, the number's load and a binary search over
		// fewer than 256 spans.
		if longest > 3+8+1 {
			t.Errorf("%s: a syscall number decided after %d instructions", rules(pol), longest)
		}
		t.Logf("%s: %d instructions, every syscall number decided within %d", rules(pol), len(prog)/sockFilterSize, longest)
	}
}

// TestFilterLoadsInTheKernel: the kernel takes each profile's program,
// and a thread under it is refused what the filter refuses and allowed
// the rest.
func TestFilterLoadsInTheKernel(t *testing.T) {
	t.Parallel()
	if !seccomp.Supported() {
		t.Skip("the kernel has no seccomp filters")
	}
	for _, pol := range filterProfiles {
		p := *pol
		if err := p.assembleFilter(); err != nil {
			t.Fatal(err)
		}
		udp := error(nil)
		if p.NetDeny || len(p.Ports) > 0 {
			udp = unix.EPERM
		}
		err := onThrowawayThread(func() error {
			if err := p.loadFilter(); err != nil {
				return err
			}
			for _, c := range []struct {
				what string
				call func() error
				want error
			}{
				{"unshare(CLONE_NEWUTS)", func() error { return unix.Unshare(unix.CLONE_NEWUTS) }, unix.EPERM},
				{"clone3", func() error {
					_, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
					return errnoOrNil(e)
				}, unix.ENOSYS},
				{"socket(AF_PACKET)", func() error { return socketErr(unix.AF_PACKET, unix.SOCK_RAW, 0) }, unix.EPERM},
				{"socket(AF_UNIX)", func() error { return socketErr(unix.AF_UNIX, unix.SOCK_STREAM, 0) }, nil},
				{"socket(AF_INET, SOCK_DGRAM)", func() error { return socketErr(unix.AF_INET, unix.SOCK_DGRAM, 0) }, udp},
				{"getpid", func() error { unix.Getpid(); return nil }, nil},
			} {
				if err := c.call(); err != c.want {
					return fmt.Errorf("%s: %v, want %v", c.what, err, c.want)
				}
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", rules(pol), err)
		}
	}
}

func errnoOrNil(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func socketErr(domain, typ, proto int) error {
	fd, err := unix.Socket(domain, typ, proto)
	if err == nil {
		_ = unix.Close(fd)
	}
	return err
}

// onThrowawayThread runs f on a thread of its own that ends with it (the
// goroutine exits locked to it), so that a filter f loads leaves the test
// process as it was. The runtime starts no thread from a locked one.
func onThrowawayThread(f func() error) error {
	var wg sync.WaitGroup
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread() // never unlocked: the thread ends here
		err = f()
	}()
	wg.Wait()
	return err
}

// BenchmarkSyscallFilter: what the filter costs the daemon to compile (once
// per set of network rules; it is kept) and a launcher to load (on each
// call's path), the library's programs chained into one as the filter was
// made before against the compiled one, under each profile; a load's
// ns/op includes starting and ending a thread (the "thread only" case),
// its median-load-µs is the load alone, steadier on a busy machine.
//
//	go test -run '^$' -bench SyscallFilter -benchmem ./toolhost/sandbox/
func BenchmarkSyscallFilter(b *testing.B) {
	info := nativeArch(b)
	if !seccomp.Supported() {
		b.Skip("the kernel has no seccomp filters")
	}
	b.Run("load/thread only", func(b *testing.B) {
		for range b.N {
			_ = onThrowawayThread(func() error { return nil })
		}
	})
	for _, pol := range filterProfiles {
		name := map[bool]string{true: "offline", false: "default"}[pol.NetDeny]
		if len(pol.Ports) > 0 {
			name = "connect_ports"
		}
		rs := pol.filterShape().filterRules()
		b.Run("build/library/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := rawFilter(chain(libraryFilter(b, info, rs))); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("build/compiled/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := compileFilter(info, rs); err != nil {
					b.Fatal(err)
				}
			}
		})
		old, err := rawFilter(chain(libraryFilter(b, info, rs)))
		if err != nil {
			b.Fatal(err)
		}
		compiled, err := compileFilter(info, rs)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			what string
			prog []byte
		}{{"library", old}, {"compiled", compiled}} {
			b.Run("load/"+c.what+"/"+name, func(b *testing.B) {
				p := policy{Filter: c.prog}
				took := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				for range b.N {
					err := onThrowawayThread(func() error {
						start := time.Now()
						err := p.loadFilter()
						took = append(took, time.Since(start))
						return err
					})
					if err != nil {
						b.Fatal(err)
					}
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-load-µs")
				b.ReportMetric(float64(len(c.prog)/sockFilterSize), "instructions")
			})
		}
	}
}

func nativeArch(tb testing.TB) *arch.Info {
	info, err := arch.GetInfo("")
	if err != nil {
		tb.Skipf("no syscall table for this architecture: %v", err)
	}
	return info
}

// libraryFilter is rules as the library assembles them, in separate
// programs as the filter was made before it was compiled in one: one
// answering ENOSYS to other architectures' syscalls, one for the syscalls
// refused whatever their arguments, one per syscall with argument rules
// (at most 12 sets each: the library's jumps are short).
func libraryFilter(tb testing.TB, info *arch.Info, rs []filterRule) [][]bpf.Instruction {
	tb.Helper()
	progs := [][]bpf.Instruction{{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(errnoAction(unix.ENOSYS))},
		bpf.RetConstant{Val: uint32(seccomp.ActionAllow)},
	}}
	var pols []seccomp.Policy
	plain := seccomp.Policy{DefaultAction: seccomp.ActionAllow}
	for _, r := range rs {
		if _, ok := info.SyscallNames[r.name]; !ok {
			continue
		}
		if len(r.sets) == 0 {
			i := slices.IndexFunc(plain.Syscalls, func(g seccomp.SyscallGroup) bool { return g.Action == r.action })
			if i < 0 {
				plain.Syscalls = append(plain.Syscalls, seccomp.SyscallGroup{Action: r.action})
				i = len(plain.Syscalls) - 1
			}
			plain.Syscalls[i].Names = append(plain.Syscalls[i].Names, r.name)
			continue
		}
		for sets := range slices.Chunk(r.sets, 12) {
			g := seccomp.SyscallGroup{Action: r.action}
			for _, set := range sets {
				g.NamesWithCondtions = append(g.NamesWithCondtions, seccomp.NameWithConditions{Name: r.name, Conditions: set})
			}
			pols = append(pols, seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{g}})
		}
	}
	for _, pol := range append([]seccomp.Policy{plain}, pols...) {
		insts, err := pol.Assemble()
		if err != nil {
			tb.Fatal(err)
		}
		// The library assembles a jump beyond 255 instructions wrong.
		if len(insts) > 255 {
			tb.Fatalf("a library program of %d instructions", len(insts))
		}
		progs = append(progs, insts)
	}
	return progs
}

func libraryVMs(tb testing.TB, progs [][]bpf.Instruction) []*bpf.VM {
	vms := make([]*bpf.VM, len(progs))
	for i, prog := range progs {
		var err error
		if vms[i], err = bpf.NewVM(prog); err != nil {
			tb.Fatal(err)
		}
	}
	return vms
}

// stackedVerdict is what the kernel answers for programs loaded in order.
func stackedVerdict(tb testing.TB, progs []*bpf.VM, data []byte) uint32 {
	want := uint32(seccomp.ActionAllow)
	for i := len(progs) - 1; i >= 0; i-- { // the last loaded runs first
		got, err := progs[i].Run(data)
		if err != nil {
			tb.Fatal(err)
		}
		if int32(uint32(got)&unix.SECCOMP_RET_ACTION_FULL) < int32(want&unix.SECCOMP_RET_ACTION_FULL) {
			want = uint32(got)
		}
	}
	return want
}

// chain joins programs into one that answers as they do loaded one over
// the other: where one allows, the next decides (each loads what it checks).
func chain(progs [][]bpf.Instruction) []bpf.Instruction {
	var out []bpf.Instruction
	for i, prog := range progs {
		for j, in := range prog {
			if r, ok := in.(bpf.RetConstant); ok && r.Val == uint32(seccomp.ActionAllow) && i < len(progs)-1 {
				in = bpf.Jump{Skip: uint32(len(prog) - j - 1)}
			}
			out = append(out, in)
		}
	}
	return out
}

// rawFilter is insts as struct sock_filter in this machine's byte order.
func rawFilter(insts []bpf.Instruction) ([]byte, error) {
	raw, err := bpf.Assemble(insts)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, in := range raw {
		out = binary.NativeEndian.AppendUint16(out, in.Op)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out, nil
}

// TestFilterCacheByShape: policies whose connect_ports lists differ share
// one assembled program (which ports is Landlock's rule, not the
// filter's), and the cache holds one entry per shape whatever the number
// of distinct lists the daemon meets.
func TestFilterCacheByShape(t *testing.T) {
	t.Parallel()
	info := nativeArch(t)
	var first []byte
	for i := range 64 {
		p := &policy{Ports: []uint16{443, uint16(1000 + i)}}
		if err := p.assembleFilter(); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = p.Filter
			continue
		}
		if &p.Filter[0] != &first[0] {
			t.Fatalf("ports %v assembled a program of its own", p.Ports)
		}
	}
	// The one program answers as the rules compiled for that list afresh.
	fresh, err := compileFilter(info, (&policy{Ports: []uint16{22}}).filterShape().filterRules())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fresh, first) {
		t.Fatal("the cached program differs from the rules compiled afresh")
	}
	n := 0
	assembledFilters.Range(func(any, any) bool { n++; return true })
	if n > 4 {
		t.Fatalf("the filter cache holds %d programs; there are 4 shapes", n)
	}
}
