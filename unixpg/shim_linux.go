//go:build linux

package unixpg

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentgate/agentgate/exec/procspec"
)

// shimSetupBound bounds how long the confinement shim may take to set a
// run up (namespaces, mounts, Landlock) before the supervisor gives up on
// it: a mount over a hung network filesystem must not hold the supervisor.
const shimSetupBound = 10 * time.Second

// shimStatusFD is the descriptor of the shim's status pipe in the shim.
const shimStatusFD = 3

// shimArgv returns the confinement shim's argv for a run of path with args
// in the sandbox sb: the status pipe is descriptor shimStatusFD, the run's
// directory handle dirAt and the Landlock ruleset rulesetAt (-1: none), and
// id, when set, the identity the program must have.
func shimArgv(sb wireSandbox, dirAt, rulesetAt int, id *procspec.FileID, path string, args []string) []string {
	argv := []string{"agentgate-shim", strconv.Itoa(shimStatusFD)}
	if dirAt >= 0 {
		argv = append(argv, "-d", strconv.Itoa(dirAt))
	}
	if rulesetAt >= 0 {
		argv = append(argv, "-l", strconv.Itoa(rulesetAt)+":"+strconv.FormatUint(uint64(sb.RulesetFlags), 10))
	}
	if sb.UserNS {
		argv = append(argv, "-u")
	}
	if sb.MountNS {
		argv = append(argv, "-m")
		for _, p := range sb.ReadOnly {
			argv = append(argv, "-r", p)
		}
		for _, p := range sb.Hide {
			argv = append(argv, "-h", p)
		}
	}
	if sb.NetNS {
		argv = append(argv, "-n")
	}
	if id != nil {
		argv = append(argv, "-e", fmt.Sprintf("%d:%d:%d:%d:%d", id.Dev, id.Ino, id.Size, id.MtimeNS, id.CtimeNS))
	}
	return append(append(argv, "--", path), args...)
}

// shimLaunch prepares a direct run's start through the confinement shim:
// the shim's path (through its descriptor), argv, and files — std (stdin,
// stdout, stderr), the write end of a new status pipe as shimStatusFD, then
// the directory handle and the ruleset. The caller closes the status pipe's
// read end, statusR, and its write end (files[shimStatusFD]) once the shim
// is started.
func shimLaunch(spec procspec.Spec, std []*os.File) (statusR *os.File, path string, argv []string, files []*os.File, err error) {
	sb := spec.Sandbox
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, "", nil, nil, fmt.Errorf("creating the confinement shim's status pipe: %v", err)
	}
	files = append(std[:runFDs:runFDs], statusW)
	dirAt, rulesetAt := -1, -1
	if spec.DirFD != nil {
		dirAt = len(files)
		files = append(files, spec.DirFD)
	}
	if sb.Ruleset != nil {
		rulesetAt = len(files)
		files = append(files, sb.Ruleset)
	}
	argv = shimArgv(wireSandboxOf(sb), dirAt, rulesetAt, spec.ProgramID, spec.Path, spec.Args)
	return statusR, "/proc/self/fd/" + strconv.Itoa(int(sb.Shim.Fd())), argv, files, nil
}

// startThroughShim starts a sandboxed run: it forks and executes the
// confinement shim (the received "shim" descriptor, through /proc/self/fd)
// with the run's stdin, stdout and stderr as 0, 1, 2, a close-on-exec
// status pipe as 3 and the directory and ruleset descriptors after it, and
// the sandbox as the shim's arguments (cmd/agentgate-shim). Without a
// directory descriptor the shim starts in Spec.Dir, by name. It then reads
// the status pipe: end of file means the shim executed the program, which
// is the started target; a message means it did not, and is reported as
// "confinefail" (C), "changed" (X) or "execfail" (E), after reaping the
// shim. The received descriptors are closed by the caller.
func startThroughShim(req controlMsg, std []uintptr, pidfd *int, cgroupFD int) (pid, _ int, ok bool) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		report(statusMsg{Verb: statusConfine, Text: "creating the confinement shim's status pipe: " + err.Error()})
		return 0, -1, false
	}
	statusR, statusW := p[0], p[1]
	defer unix.Close(statusR)
	files := append(std[:runFDs:runFDs], uintptr(statusW))
	shimFD, dirAt, rulesetAt := -1, -1, -1
	for i, name := range req.Spec.Extra {
		fd := req.FDs[runFDs+i]
		switch name {
		case extraShim:
			shimFD = fd
		case extraDir:
			dirAt = len(files)
			files = append(files, uintptr(fd))
		case extraRuleset:
			rulesetAt = len(files)
			files = append(files, uintptr(fd))
		}
	}
	args := shimArgv(*req.Spec.Sandbox, dirAt, rulesetAt, req.Spec.ProgramID, req.Spec.Path, req.Spec.Args)
	dir := req.Spec.Dir
	if slices.Contains(req.Spec.Extra, extraDir) {
		dir = "" // the shim enters the directory through its descriptor
	}
	pid, err := syscall.ForkExec("/proc/self/fd/"+strconv.Itoa(shimFD), args, &syscall.ProcAttr{
		Dir:   dir,
		Env:   req.Spec.Env,
		Files: files,
		Sys:   targetSysProcAttr(pidfd, cgroupFD),
	})
	unix.Close(statusW)
	if err != nil {
		report(statusMsg{Verb: statusConfine, Text: "starting the confinement shim: " + err.Error()})
		return 0, -1, false
	}
	msg, err := readShimStatus(statusR)
	if err == nil && msg == "" {
		return pid, *pidfd, true
	}
	// The shim did not execute the program: it exits (or is killed here)
	// and is reaped before the supervisor reports, so nothing of the run
	// is left.
	if err != nil {
		_ = unix.Kill(pid, unix.SIGKILL)
		msg = "C the confinement shim " + err.Error()
	}
	var ws unix.WaitStatus
	for {
		if _, werr := unix.Wait4(pid, &ws, 0, nil); werr != unix.EINTR {
			break
		}
	}
	if *pidfd >= 0 {
		unix.Close(*pidfd)
	}
	report(shimFailure(msg))
	return 0, -1, false
}

// readShimStatus reads the shim's status pipe until end of file (the exec
// succeeded: "") or a message, within shimSetupBound.
func readShimStatus(fd int) (string, error) {
	var out []byte
	buf := make([]byte, 1024)
	deadline := time.Now().Add(shimSetupBound)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return "", errors.New("did not finish setting the run up within " + shimSetupBound.String())
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if err == unix.EINTR || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("status could not be read: %v", err)
		}
		m, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("status could not be read: %v", err)
		}
		if m == 0 {
			return string(out), nil
		}
		out = append(out, buf[:m]...)
	}
}

// shimFailure turns the shim's message ("C text", "X text", "E errno
// text") into the status line to report.
func shimFailure(msg string) statusMsg {
	kind, text, _ := strings.Cut(msg, " ")
	switch kind {
	case "X":
		return statusMsg{Verb: statusChanged, Text: text}
	case "E":
		num, rest, _ := strings.Cut(text, " ")
		if errno, err := strconv.Atoi(num); err == nil && errno > 0 {
			return statusMsg{Verb: statusExecFail, Num: errno, Text: rest}
		}
	}
	return statusMsg{Verb: statusConfine, Text: text}
}
