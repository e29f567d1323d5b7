package vmtest

import (
	"fmt"
	"io"
	"path"
	"strings"
)

// cpioWriter writes the "newc" cpio archive the kernel unpacks as its
// initramfs: directories and regular files, owned by root.
type cpioWriter struct {
	w    io.Writer
	ino  int
	dirs map[string]bool
	err  error
}

func newCPIO(w io.Writer) *cpioWriter {
	return &cpioWriter{w: w, dirs: map[string]bool{"": true, ".": true, "/": true}}
}

// file adds name (a path without the leading slash) with data and mode,
// and the directories above it that are not there yet.
func (c *cpioWriter) file(name string, mode uint32, data []byte) {
	c.mkdirAll(path.Dir(name))
	c.entry(name, 0o100000|mode, data)
}

// mkdirAll adds dir and its parents.
func (c *cpioWriter) mkdirAll(dir string) {
	if c.dirs[dir] {
		return
	}
	c.mkdirAll(path.Dir(dir))
	c.dirs[dir] = true
	c.entry(dir, 0o040000|0o755, nil)
}

func (c *cpioWriter) entry(name string, mode uint32, data []byte) {
	if c.err != nil {
		return
	}
	c.ino++
	nlink := 1
	if mode&0o040000 != 0 {
		nlink = 2
	}
	name = strings.TrimPrefix(name, "/")
	// magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
	// devminor, rdevmajor, rdevminor, namesize (with its NUL), check.
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
	c.write([]byte(hdr + name + "\x00"))
	c.pad(len(hdr) + len(name) + 1)
	c.write(data)
	c.pad(len(data))
}

// pad aligns the archive to 4 bytes after n bytes of a record.
func (c *cpioWriter) pad(n int) {
	if r := n % 4; r != 0 {
		c.write(make([]byte, 4-r))
	}
}

func (c *cpioWriter) write(b []byte) {
	if c.err == nil {
		_, c.err = c.w.Write(b)
	}
}

// close writes the trailer and returns the first error.
func (c *cpioWriter) close() error {
	c.entry("TRAILER!!!", 0, nil)
	return c.err
}
