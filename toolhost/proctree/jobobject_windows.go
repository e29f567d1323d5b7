package proctree

import (
	"fmt"
	"syscall"
	"unsafe"

	"github.com/rs/zerolog"
	"golang.org/x/sys/windows"
)

// pickMode: Windows has one way, a Job Object per tree.
func pickMode(m *Manager, want Mode) (Mode, platform, error) {
	switch want {
	case ModeAuto, ModeJobObject:
		return ModeJobObject, jobPlatform{log: m.log}, nil
	}
	return 0, nil, fmt.Errorf("process tree mode %s is not available on Windows", want)
}

// killedExitCode is the exit code TerminateJobObject gives the members: a
// shell's code for "killed by SIGKILL", so logs read the same as on Unix.
const killedExitCode = 128 + 9

// jobPlatform makes Job Object trees.
type jobPlatform struct{ log zerolog.Logger }

func (p jobPlatform) newTree(string) (backend, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create job object: %w", err)
	}
	// Closing the last handle (Release, or the daemon dying) kills every
	// member, so a crashed daemon leaves nothing running either. Breakaway
	// is not allowed: children of members are members.
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return nil, fmt.Errorf("set job object limits: %w", err)
	}
	return &jobBackend{job: job, log: p.log}, nil
}

func (jobPlatform) close() {}

// jobBackend tracks a tree as a Job Object (ModeJobObject). Every process a
// member creates is put in the job by the system before it runs, so a tree
// can neither escape nor fork past a kill. The leader itself must be put in
// by us: it is created suspended (sysProcAttr) and resumed by started once
// it is a member, so it cannot start a child outside the job first.
type jobBackend struct {
	job      windows.Handle
	log      zerolog.Logger
	startErr error // the leader could not be put in the job (it was killed)
}

// sysProcAttr: suspended until started, and a console process group of its
// own (like Setpgid on Unix: a Ctrl+C in the daemon's console reaches the
// daemon, which stops its trees itself, not the plugins behind its back).
func (b *jobBackend) sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
}

// started puts the suspended leader in the job and lets it run. If that
// fails the leader is terminated before it ran a single instruction: a
// process outside the job could not be stopped with its tree. The pid
// cannot have been reused meanwhile: the caller's os.Process holds a handle
// to the leader.
func (b *jobBackend) started(pid int) {
	if err := b.admit(pid); err != nil {
		b.startErr = fmt.Errorf("put process %d in its job object (it was killed): %w", pid, err)
		b.log.Error().Err(b.startErr).Msg("process tree")
	}
}

func (b *jobBackend) admit(pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_SUSPEND_RESUME,
		false, uint32(pid))
	if err != nil {
		return fmt.Errorf("open process: %w", err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(b.job, h); err != nil {
		_ = windows.TerminateProcess(h, killedExitCode)
		return fmt.Errorf("assign to job object: %w", err)
	}
	if err := resumeProcess(h); err != nil {
		_ = windows.TerminateJobObject(b.job, killedExitCode)
		return fmt.Errorf("resume: %w", err)
	}
	return nil
}

// startError is what StartProcess reports when started failed.
func (b *jobBackend) startError() error { return b.startErr }

// signal: Windows has no SIGTERM for processes without a console window of
// their own (plugins run with pipes, not consoles), so only SIGKILL has an
// effect: it terminates the job. Tree.Kill skips the grace on this mode.
func (b *jobBackend) signal(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		b.killAll()
	}
}

// alive: the job counts its processes that have not exited. A failed query
// says false: the caller then releases the tree, and closing the job kills
// whatever is left (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE).
func (b *jobBackend) alive() bool {
	var info jobAccounting
	if err := windows.QueryInformationJobObject(b.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
		b.log.Warn().Err(err).Msg("query job object")
		return false
	}
	return info.ActiveProcesses > 0
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which x/sys/windows lacks.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// killAll terminates every member at once; processes being created join
// the job and are terminated with it.
func (b *jobBackend) killAll() {
	if err := windows.TerminateJobObject(b.job, killedExitCode); err != nil {
		b.log.Warn().Err(err).Msg("terminate job object")
	}
}

func (b *jobBackend) reap() {}

// release closes the job: whatever is still in it is killed.
func (b *jobBackend) release() { _ = windows.CloseHandle(b.job) }

var procNtResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

// resumeProcess resumes every thread of a process created suspended (Go's
// os.StartProcess closes the thread handle CreateProcess returned, so
// ResumeThread is out of reach). NtResumeProcess is not in the Windows SDK
// documentation but has been in ntdll since Windows XP, unchanged.
func resumeProcess(h windows.Handle) error {
	if err := procNtResumeProcess.Find(); err != nil {
		return err
	}
	r, _, _ := procNtResumeProcess.Call(uintptr(h))
	if r != 0 {
		return windows.NTStatus(r)
	}
	return nil
}

// withCallerSys keeps the caller's command line and window choice: a
// program such as cmd.exe needs its command line as written.
func withCallerSys(tree, caller *syscall.SysProcAttr) *syscall.SysProcAttr {
	if caller != nil {
		tree.CmdLine, tree.HideWindow = caller.CmdLine, caller.HideWindow
	}
	return tree
}
