#include "textflag.h"

// func cloneInit(flags, stack uintptr, fn func(*initArgs), a *initArgs) (pid uintptr, errno syscall.Errno)
TEXT ·cloneInit(SB),NOSPLIT,$0-48
	MOVQ	flags+0(FP), DI
	MOVQ	stack+8(FP), SI
	MOVQ	$0, DX	// parent_tid
	MOVQ	$0, R10	// child_tid
	MOVQ	$0, R8	// tls
	MOVQ	fn+16(FP), R13	// kept by the system call, for the child
	MOVQ	a+24(FP), R12
	MOVQ	$56, AX	// SYS_clone
	SYSCALL
	CMPQ	AX, $0
	JEQ	child
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$0, pid+32(FP)
	NEGQ	AX
	MOVQ	AX, errno+40(FP)
	RET
ok:
	MOVQ	AX, pid+32(FP)
	MOVQ	$0, errno+40(FP)
	RET
child:
	// On the new stack: fn(a), which ends the process. Called through the
	// func value, as Go calls one (its argument in AX, X15 zero), so that
	// no wrapper runs: a wrapper may call into the runtime (the race
	// detector's function entry), which this process must never do.
	SUBQ	$16, SP
	MOVQ	R12, AX
	MOVQ	R13, DX
	MOVQ	0(DX), BX
	XORPS	X15, X15
	CALL	BX
	INT	$3
