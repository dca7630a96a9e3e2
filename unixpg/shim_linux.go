//go:build linux

package unixpg

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// shimSetupBound bounds how long the confinement shim may take to set a
// run up (namespaces, mounts, Landlock) before the supervisor gives up on
// it: a mount over a hung network filesystem must not hold the supervisor.
const shimSetupBound = 10 * time.Second

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
	sb := req.Spec.Sandbox
	args := []string{"agentgate-shim", "3"}
	shimFD := -1
	for i, name := range req.Spec.Extra {
		fd := req.FDs[runFDs+i]
		switch name {
		case extraShim:
			shimFD = fd
		case extraDir:
			args = append(args, "-d", strconv.Itoa(len(files)))
			files = append(files, uintptr(fd))
		case extraRuleset:
			args = append(args, "-l", strconv.Itoa(len(files))+":"+strconv.FormatUint(uint64(sb.RulesetFlags), 10))
			files = append(files, uintptr(fd))
		}
	}
	if sb.UserNS {
		args = append(args, "-u")
	}
	if sb.MountNS {
		args = append(args, "-m")
		for _, path := range sb.ReadOnly {
			args = append(args, "-r", path)
		}
		for _, path := range sb.Hide {
			args = append(args, "-h", path)
		}
	}
	if sb.NetNS {
		args = append(args, "-n")
	}
	if id := req.Spec.ProgramID; id != nil {
		args = append(args, "-e", fmt.Sprintf("%d:%d:%d:%d:%d", id.Dev, id.Ino, id.Size, id.MtimeNS, id.CtimeNS))
	}
	args = append(append(args, "--", req.Spec.Path), req.Spec.Args...)
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
