package outpipe

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/windows"
)

var pipeSeq atomic.Uint64

// New is a pipe for a child's stdout or stderr: ours reads, theirs is the
// child's. os.Pipe's handles are synchronous, and Go cannot put a read
// deadline on them, which the drain after a child's exit needs; so ours is
// the overlapped server end of a named pipe (os.NewFile makes such a
// handle pollable, deadlines included), theirs a plain client end, as
// children expect. The pipe takes one instance and no remote client, and
// is connected before this returns, so nobody else can take it.
func New() (ours, theirs *os.File, err error) {
	name := fmt.Sprintf(`\\.\pipe\vcpnode-%d-%d`, os.Getpid(), pipeSeq.Add(1))
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, nil, err
	}
	server, err := windows.CreateNamedPipe(name16,
		windows.PIPE_ACCESS_INBOUND|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		1, 64<<10, 64<<10, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("create pipe: %w", err)
	}
	client, err := windows.CreateFile(name16, windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		_ = windows.CloseHandle(server)
		return nil, nil, fmt.Errorf("open pipe: %w", err)
	}
	// The client is connected already; the call confirms it was ours.
	var ov windows.Overlapped
	if err := windows.ConnectNamedPipe(server, &ov); err != nil && err != windows.ERROR_PIPE_CONNECTED {
		_ = windows.CloseHandle(client)
		_ = windows.CloseHandle(server)
		return nil, nil, fmt.Errorf("connect pipe: %w", err)
	}
	return os.NewFile(uintptr(server), name), os.NewFile(uintptr(client), name), nil
}

// Pending is how many bytes wait unread in the pipe f (ours of New); a
// socket here fails.
func Pending(f Conn) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n uint32
	var peekErr error
	if err := rc.Control(func(h uintptr) {
		if ok, _, e := procPeekNamedPipe.Call(h, 0, 0, 0, uintptr(unsafe.Pointer(&n)), 0); ok == 0 {
			peekErr = e
		}
	}); err != nil {
		return 0, err
	}
	return int(n), peekErr
}

// procPeekNamedPipe is kernel32's PeekNamedPipe, which golang.org/x/sys/windows
// does not wrap.
var procPeekNamedPipe = windows.NewLazySystemDLL("kernel32.dll").NewProc("PeekNamedPipe")
