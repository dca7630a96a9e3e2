//go:build windows

package winjob

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/agentgate/agentgate/exec/procspec"
)

// Process is a started run: the target and its Job Object. Its methods are
// safe for concurrent use.
type Process struct {
	// proc is the target (the job's first process).
	proc *os.Process
	// job is the job handle; closed by watch once the job is empty.
	job windows.Handle
	// jobMu guards jobOpen against TerminateJobObject on a closed handle.
	jobMu sync.Mutex
	// jobOpen is true until watch closes job.
	jobOpen bool
	// terminated is set before Terminate, Kill or the deadline ends the job.
	terminated atomic.Bool
	// deadlineHit is set when the deadline (Spec.Timeout), and no earlier
	// Terminate or Kill, ended the job.
	deadlineHit atomic.Bool
	// deadline is the timer of Spec.Timeout; nil when the run has none.
	deadline *time.Timer
	// done is closed once status is final.
	done chan struct{}
	// status is the leader's exit status.
	status procspec.ExitStatus
	// err is non-nil when the job could not be emptied or closed cleanly.
	err error
}

// jobEmptyPoll is how often watch checks that a terminated job is empty.
const jobEmptyPoll = 5 * time.Millisecond

// ntResumeProcess resumes every thread of a process (ntdll; not in
// x/sys/windows).
var ntResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

// Start creates an unnamed, non-inheritable Job Object that kills its
// processes when its last handle closes, starts spec.Path suspended, assigns
// it to the job, resumes it, and returns. The target gets exactly spec.Env,
// spec.Dir and the given standard files. A .bat or .cmd target runs
// through cmd.exe with the command line BatchCommandLine builds: spec.Path
// in place of spec.Args[0], so that cmd.exe runs the approved file.
//
// Errors, after which nothing runs:
//   - spec is unusable (relative Path, empty Args) or a batch file's path
//     or argument fails CheckBatchArgs (*BatchArgError): a plain error;
//   - the target could not be created: os.StartProcess's error;
//   - the job could not be created, configured or joined, or the target
//     could not be resumed: an error wrapping ErrContainment, whose text
//     tells an agent not to retry or bypass. The target is terminated first.
func Start(spec procspec.Spec) (*Process, error) {
	if !filepath.IsAbs(spec.Path) {
		return nil, fmt.Errorf("start %q: the executable path must be absolute", spec.Path)
	}
	if len(spec.Args) == 0 {
		return nil, fmt.Errorf("start %q: argv is empty; it must hold at least argv[0]", spec.Path)
	}
	if err := CheckBatchArgs(spec.Path, spec.Args); err != nil {
		return nil, err
	}
	job, err := newJob()
	if err != nil {
		return nil, containmentErr(spec.Path, "creating its job object", err)
	}
	std := [3]*os.File{spec.Stdin, spec.Stdout, spec.Stderr}
	for i, f := range std {
		if f == nil {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				windows.CloseHandle(job)
				return nil, fmt.Errorf("start %q: opening %s: %v", spec.Path, os.DevNull, err)
			}
			defer null.Close()
			std[i] = null
		}
	}
	sys := &syscall.SysProcAttr{CreationFlags: creationFlags(), HideWindow: true}
	if IsBatchFile(spec.Path) {
		// cmd.exe runs the command line, not spec.Path: make it start with
		// the approved path, or cmd.exe looks argv[0] up again.
		sys.CmdLine = BatchCommandLine(spec.Path, spec.Args, syscall.EscapeArg)
	}
	proc, err := os.StartProcess(spec.Path, spec.Args, &os.ProcAttr{
		Dir:   spec.Dir,
		Env:   spec.Env,
		Files: std[:],
		Sys:   sys,
	})
	if err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("start %q: %w", spec.Path, err)
	}
	var step string
	var stepErr error
	herr := proc.WithHandle(func(h uintptr) {
		if err := windows.AssignProcessToJobObject(job, windows.Handle(h)); err != nil {
			step, stepErr = "assigning the process to its job object", err
			return
		}
		if err := resumeProcess(windows.Handle(h), proc.Pid); err != nil {
			step, stepErr = "resuming the process inside its job object", err
		}
	})
	if herr != nil {
		step, stepErr = "getting the process handle", herr
	}
	if stepErr != nil {
		_ = proc.Kill() // TerminateProcess: it never ran (suspended) or runs in the job
		_, _ = proc.Wait()
		_ = windows.TerminateJobObject(job, terminatedExitCode)
		windows.CloseHandle(job)
		return nil, containmentErr(spec.Path, step, stepErr)
	}
	p := &Process{proc: proc, job: job, jobOpen: true, done: make(chan struct{})}
	if spec.Timeout > 0 {
		p.deadline = time.AfterFunc(spec.Timeout, p.deadlinePassed)
	}
	go p.watch()
	return p, nil
}

// newJob creates the run's job: unnamed, with a non-inheritable handle
// (nil security attributes), limited by jobLimitFlags.
func newJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = jobLimitFlags()
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("setting JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: %w", err)
	}
	return job, nil
}

// resumeProcess resumes a process created suspended: NtResumeProcess when
// ntdll has it, otherwise every thread of pid found in a thread snapshot.
func resumeProcess(h windows.Handle, pid int) error {
	if ntResumeProcess.Find() == nil {
		status, _, _ := ntResumeProcess.Call(uintptr(h))
		if status != 0 {
			return fmt.Errorf("NtResumeProcess: NTSTATUS %#x", status)
		}
		return nil
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("thread snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return fmt.Errorf("opening thread %d: %w", entry.ThreadID, err)
		}
		_, rerr := windows.ResumeThread(th)
		windows.CloseHandle(th)
		if rerr != nil {
			return fmt.Errorf("resuming thread %d: %w", entry.ThreadID, rerr)
		}
		resumed++
	}
	if resumed == 0 {
		return errors.New("no thread of the process found to resume")
	}
	return nil
}

// jobAccounting mirrors JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which
// x/sys/windows does not define.
type jobAccounting struct {
	// The times are 100 ns units, unused here.
	TotalUserTime, TotalKernelTime, ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime int64
	// TotalPageFaultCount is unused here.
	TotalPageFaultCount uint32
	// TotalProcesses counts every process ever in the job.
	TotalProcesses uint32
	// ActiveProcesses counts the processes in the job now.
	ActiveProcesses uint32
	// TotalTerminatedProcesses counts processes ended by a job limit.
	TotalTerminatedProcesses uint32
}

// activeProcesses returns how many processes the job holds.
func activeProcesses(job windows.Handle) (uint32, error) {
	var info jobAccounting
	err := windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return info.ActiveProcesses, err
}

// watch waits for the leader, ends the rest of the job (nothing outlives the
// leader), waits until the job is empty, closes it and publishes the result.
func (p *Process) watch() {
	state, err := p.proc.Wait()
	if p.deadline != nil {
		p.deadline.Stop()
	}
	code := -1
	if err == nil {
		code = state.ExitCode()
	}
	if p.terminated.Load() && uint32(code) == terminatedExitCode {
		p.status = procspec.ExitStatus{Code: -1, Signal: "TerminateJobObject", TimedOut: p.deadlineHit.Load()}
	} else {
		p.status = procspec.ExitStatus{Code: code, Exited: err == nil}
	}
	// Terminate concurrently with terminate() is harmless; only closing the
	// handle must not race with it.
	_ = windows.TerminateJobObject(p.job, terminatedExitCode)
	for {
		n, qerr := activeProcesses(p.job)
		if qerr != nil {
			p.err = fmt.Errorf("run pid %d: checking that its job is empty: %v: %w", p.proc.Pid, qerr, procspec.ErrContainment)
			break
		}
		if n == 0 {
			break
		}
		time.Sleep(jobEmptyPoll)
	}
	p.jobMu.Lock()
	windows.CloseHandle(p.job) // KILL_ON_JOB_CLOSE: anything left ends now
	p.jobOpen = false
	p.jobMu.Unlock()
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("run pid %d: waiting for the process: %w", p.proc.Pid, err)
	}
	close(p.done)
}

// Pid returns the target's process id.
func (p *Process) Pid() int { return p.proc.Pid }

// Terminate ends the whole job at once with TerminateJobObject: Windows has
// no SIGTERM to send first, so waiting a grace period would only delay.
// It returns at once; Wait tells when the job is empty. Calls after the
// run ended do nothing.
func (p *Process) Terminate() { p.terminate() }

// Kill is Terminate: on Windows both end the job at once.
func (p *Process) Kill() { p.terminate() }

// terminate marks the run as ended by request and terminates its job.
func (p *Process) terminate() {
	p.jobMu.Lock()
	defer p.jobMu.Unlock()
	if !p.jobOpen {
		return
	}
	p.terminated.Store(true)
	_ = windows.TerminateJobObject(p.job, terminatedExitCode)
}

// deadlinePassed ends the job because Spec.Timeout passed, unless it was
// already ended or asked to end.
func (p *Process) deadlinePassed() {
	p.jobMu.Lock()
	defer p.jobMu.Unlock()
	if !p.jobOpen || p.terminated.Load() {
		return
	}
	p.deadlineHit.Store(true)
	p.terminated.Store(true)
	_ = windows.TerminateJobObject(p.job, terminatedExitCode)
}

// Wait returns the leader's exit status once the leader has exited, every
// other process of its job is gone and the job handle is closed. It may be
// called any number of times from any goroutines; all get the same result.
func (p *Process) Wait() (procspec.ExitStatus, error) {
	<-p.done
	return p.status, p.err
}

// Done returns a channel closed when Wait would return.
func (p *Process) Done() <-chan struct{} { return p.done }
