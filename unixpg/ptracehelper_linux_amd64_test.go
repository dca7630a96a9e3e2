//go:build linux && amd64

package unixpg_test

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// ptraceInjectSupported is true where injectClearSubreaper is implemented.
const ptraceInjectSupported = true

// injectClearSubreaper is the tamper of the subreaper flag done as a debugger would:
// it attaches to pid, makes it call prctl(PR_SET_CHILD_SUBREAPER, 0) by
// writing a syscall instruction at its program counter and single-stepping
// it, restores its code and registers, and detaches. It returns prctl's
// result or the ptrace error (EPERM where the kernel refuses the attach).
func injectClearSubreaper(pid int) error {
	runtime.LockOSThread() // every ptrace request must come from the tracer thread
	if err := unix.PtraceAttach(pid); err != nil {
		return fmt.Errorf("ptrace attach: %w", err)
	}
	defer unix.PtraceDetach(pid)
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
		return fmt.Errorf("waiting for the attach stop: %w", err)
	}
	var saved unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &saved); err != nil {
		return fmt.Errorf("get regs: %w", err)
	}
	code := make([]byte, 8)
	if _, err := unix.PtracePeekText(pid, uintptr(saved.Rip), code); err != nil {
		return fmt.Errorf("peek text: %w", err)
	}
	patched := append([]byte{0x0f, 0x05}, code[2:]...) // syscall
	if _, err := unix.PtracePokeText(pid, uintptr(saved.Rip), patched); err != nil {
		return fmt.Errorf("poke text: %w", err)
	}
	defer unix.PtracePokeText(pid, uintptr(saved.Rip), code)
	defer unix.PtraceSetRegs(pid, &saved)
	regs := saved
	regs.Orig_rax = ^uint64(0) // no syscall restart for the interrupted call
	regs.Rax = unix.SYS_PRCTL
	regs.Rdi = unix.PR_SET_CHILD_SUBREAPER
	regs.Rsi, regs.Rdx, regs.R10, regs.R8 = 0, 0, 0, 0
	if err := unix.PtraceSetRegs(pid, &regs); err != nil {
		return fmt.Errorf("set regs: %w", err)
	}
	if err := unix.PtraceSingleStep(pid); err != nil {
		return fmt.Errorf("single step: %w", err)
	}
	if _, err := unix.Wait4(pid, &ws, unix.WALL, nil); err != nil {
		return fmt.Errorf("waiting for the step: %w", err)
	}
	var after unix.PtraceRegs
	if err := unix.PtraceGetRegs(pid, &after); err != nil {
		return fmt.Errorf("get regs after the step: %w", err)
	}
	if ret := int64(after.Rax); ret != 0 {
		return fmt.Errorf("the injected prctl returned %d", ret)
	}
	return nil
}
