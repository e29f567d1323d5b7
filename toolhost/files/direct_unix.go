//go:build unix

package files

import (
	"io"
	"os"
	"syscall"
)

// directFile is a regular file opened by openDirect, read with plain
// read(2): a small file is read and closed in a few microseconds, and an
// os.File would add an fcntl and a finalizer to that.
type directFile struct {
	fd   int
	name string
	size int64 // measured when opened
}

func (d *directFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(d.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: d.name, Err: err}
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (d *directFile) Close() error {
	if d.fd < 0 {
		return nil
	}
	err := syscall.Close(d.fd)
	d.fd = -1
	return err
}

// osFile hands the descriptor over to an os.File (for streaming), at the
// start of the file.
func (d *directFile) osFile() (*os.File, error) {
	f := os.NewFile(uintptr(d.fd), d.name)
	d.fd = -1
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
