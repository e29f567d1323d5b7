//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package outpipe

// fionread asks a pipe how many bytes it holds: FIONREAD, _IOR('f', 127,
// int) on the BSDs, which golang.org/x/sys/unix does not name.
const fionread = 0x4004667f
