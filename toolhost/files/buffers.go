package files

import (
	"math/bits"
	"sync"
)

// Buffers are pooled in power-of-two classes from minPooled to maxPooled
// bytes, so a 1 KiB file and a 100 KiB one do not trade buffers and a
// burst of small files allocates nothing once the pool is warm.
const (
	minPooledShift = 12 // 4 KiB
	maxPooledShift = 18 // 256 KiB: the largest small file's base64 and envelope
)

var bufClasses [maxPooledShift - minPooledShift + 1]sync.Pool

// classOf returns the pool class of a buffer of n bytes, or -1 if n is
// beyond the largest class.
func classOf(n int) int {
	shift := bits.Len(uint(max(n, 1) - 1))
	if shift < minPooledShift {
		shift = minPooledShift
	}
	if shift > maxPooledShift {
		return -1
	}
	return shift - minPooledShift
}

// getBuf returns a zero-length buffer with room for at least n bytes.
func getBuf(n int) *[]byte {
	c := classOf(n)
	if c < 0 {
		b := make([]byte, 0, n)
		return &b
	}
	if p, ok := bufClasses[c].Get().(*[]byte); ok {
		*p = (*p)[:0]
		return p
	}
	b := make([]byte, 0, 1<<(c+minPooledShift))
	return &b
}

// putBuf returns a buffer from getBuf to its class; one beyond the largest
// class is left to the garbage collector.
func putBuf(p *[]byte) {
	if p == nil {
		return
	}
	c := classOf(cap(*p))
	if c < 0 || cap(*p) != 1<<(c+minPooledShift) {
		return
	}
	bufClasses[c].Put(p)
}
