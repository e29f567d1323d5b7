package sandbox

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On amd64 the init shares the launcher's memory (CLONE_VM) instead of
// getting a copy of it: the fork copies no page tables, and the init's
// end, on the call's exit path, unmaps nothing (the launcher's end does,
// once). The init runs on a stack of its own, in its arguments, and
// touches nothing else of the launcher's memory but its arguments.

// initStack is the init's own stack: initMain and the raw system calls
// it makes are nosplit, a few hundred bytes deep.
type initStack [16 << 10]byte

// forkInit starts initMain(a) in a new process that shares the calling
// process's memory and runs on a.stack; it never returns there.
func forkInit(a *initArgs) (uintptr, syscall.Errno) {
	top := (uintptr(unsafe.Pointer(&a.stack[0])) + uintptr(len(a.stack))) &^ 15
	return cloneInit(unix.CLONE_VM|uintptr(unix.SIGCHLD), top, initMain, a)
}

// cloneInit is clone(flags, stack) whose child calls fn(a) on that stack
// (initclone_linux_amd64.s); fn is nosplit and norace and never returns.
//
//go:noescape
func cloneInit(flags, stack uintptr, fn func(*initArgs), a *initArgs) (pid uintptr, errno syscall.Errno)
