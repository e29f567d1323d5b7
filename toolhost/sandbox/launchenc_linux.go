package sandbox

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"
)

// The launch travels to the launcher in a compact binary form: decoding
// it is on every confined call's path, in a process whose caches are
// cold, where JSON (reflection, base64 for the syscall filter) took a
// tenth of a millisecond. Every field of launch and policy is written,
// in declaration order; TestLaunchEncodingCarriesEveryField fails when a
// field is added here without being added to the encoding.
//
// Numbers are varints (signed ones zigzag), strings and byte slices a
// length and their bytes, a slice a count and its elements, a map its
// count and its pairs in key order; a slice or pointer that may be nil
// and must stay so is a count plus one (0: nil).

// launchMagic opens every encoded launch: a launcher of another build
// refuses the launch rather than misreading it.
const launchMagic = "vcpL1"

// encodeLaunch appends l to buf.
func encodeLaunch(buf []byte, l *launch) []byte {
	e := launchEncoder{buf: append(buf, launchMagic...)}
	if e.present(l.Policy != nil) {
		p := l.Policy
		e.uint(uint64(len(p.Grants)))
		for _, g := range p.Grants {
			e.str(g.Path)
			e.bool(g.Write)
			e.str(g.From)
		}
		e.bool(p.NetDeny)
		e.uint(uint64(len(p.Ports)))
		for _, port := range p.Ports {
			e.uint(uint64(port))
		}
		e.strs(p.Tasks)
		e.uint(uint64(len(p.Rlimits)))
		for _, k := range slices.Sorted(maps.Keys(p.Rlimits)) {
			e.int(int64(k))
			e.uint(p.Rlimits[k])
		}
		e.bool(p.Strict)
		e.bool(p.NoFilter)
		e.bytes(p.Filter)
		e.strs(p.Hide)
		e.present(p.NS != nil)
	}
	e.str(l.Path)
	e.strs(l.Args)
	if e.present(l.Env != nil) {
		e.strs(l.Env)
	}
	e.str(l.Dir)
	e.uint(uint64(len(l.Fds)))
	for _, fd := range l.Fds {
		e.int(int64(fd))
	}
	return e.buf
}

// decodeLaunch reads a launch encodeLaunch wrote; anything else, cut
// short or followed by more, is an error.
func decodeLaunch(data []byte) (*launch, error) {
	if len(data) < len(launchMagic) || string(data[:len(launchMagic)]) != launchMagic {
		return nil, errors.New("not a launch of this build")
	}
	d := launchDecoder{data: data[len(launchMagic):]}
	var l launch
	if d.present() {
		p := new(policy)
		if n := d.count(3); n > 0 {
			p.Grants = make([]Grant, n)
			for i := range p.Grants {
				p.Grants[i] = Grant{Path: d.str(), Write: d.bool(), From: d.str()}
			}
		}
		p.NetDeny = d.bool()
		if n := d.count(1); n > 0 {
			p.Ports = make([]uint16, n)
			for i := range p.Ports {
				v := d.uint()
				if v > 0xffff {
					d.err = errors.New("port out of range")
				}
				p.Ports[i] = uint16(v)
			}
		}
		p.Tasks = d.strs()
		if n := d.count(2); n > 0 {
			p.Rlimits = make(map[int]uint64, n)
			for range n {
				k := int(d.int())
				p.Rlimits[k] = d.uint()
			}
		}
		p.Strict = d.bool()
		p.NoFilter = d.bool()
		if f := d.bytes(); len(f) > 0 {
			p.Filter = f
		}
		p.Hide = d.strs()
		if d.present() {
			p.NS = &nsPlan{}
		}
		l.Policy = p
	}
	l.Path = d.str()
	l.Args = d.strs()
	if d.present() {
		l.Env = d.strs()
		if l.Env == nil {
			l.Env = []string{}
		}
	}
	l.Dir = d.str()
	if n := d.count(1); n > 0 {
		l.Fds = make([]int, n)
		for i := range l.Fds {
			l.Fds[i] = int(d.int())
		}
	}
	if d.err == nil && len(d.data) > 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return nil, d.err
	}
	return &l, nil
}

type launchEncoder struct{ buf []byte }

func (e *launchEncoder) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *launchEncoder) int(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }

func (e *launchEncoder) bool(v bool) {
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// present writes whether a nil-able value follows, and returns it.
func (e *launchEncoder) present(v bool) bool {
	e.bool(v)
	return v
}

func (e *launchEncoder) str(s string) {
	e.uint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *launchEncoder) bytes(b []byte) {
	e.uint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

func (e *launchEncoder) strs(ss []string) {
	e.uint(uint64(len(ss)))
	for _, s := range ss {
		e.str(s)
	}
}

// launchDecoder reads what launchEncoder wrote; the first error sticks
// and every later read returns a zero value.
type launchDecoder struct {
	data []byte
	err  error
}

var errLaunchShort = errors.New("launch cut short")

func (d *launchDecoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data)
	if n <= 0 {
		d.err = errLaunchShort
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *launchDecoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.data)
	if n <= 0 {
		d.err = errLaunchShort
		return 0
	}
	d.data = d.data[n:]
	return v
}

func (d *launchDecoder) bool() bool {
	switch d.uint() {
	case 0:
		return false
	case 1:
		return true
	}
	if d.err == nil {
		d.err = errors.New("launch: not a boolean")
	}
	return false
}

func (d *launchDecoder) present() bool { return d.bool() }

// count reads a count of elements that take at least min bytes each: a
// count the rest of the data cannot hold is an error, not an allocation.
func (d *launchDecoder) count(min int) int {
	n := d.uint()
	if d.err == nil && n > uint64(len(d.data)/min) {
		d.err = errLaunchShort
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

func (d *launchDecoder) bytes() []byte {
	n := d.count(1)
	if d.err != nil {
		return nil
	}
	b := d.data[:n:n]
	d.data = d.data[n:]
	return b
}

func (d *launchDecoder) str() string { return string(d.bytes()) }

func (d *launchDecoder) strs() []string {
	n := d.count(1)
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.str()
	}
	return ss
}
