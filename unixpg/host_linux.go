//go:build linux

package unixpg

import (
	"os"
	"runtime"
	"sync"
	"syscall"
)

// supervisorSysProcAttr puts the supervisor in its own process group (so a
// terminal's Ctrl-C reaches the host, which decides, and not the supervisor)
// and asks for SIGHUP when the host's starting thread dies. The supervisor
// treats SIGHUP like the end of its lifeline and kills the tree: a catchable
// signal, because SIGKILL would kill the supervisor before its sweep and
// leave escaped descendants behind.
func supervisorSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGHUP}
}

// startRequest is one supervisor or warden start handed to the starter
// goroutine.
type startRequest struct {
	// exe and attr are os.StartProcess's arguments, and argv is exe
	// followed by args (superviseArg, or wardenArg and its arguments).
	exe  string
	args []string
	attr *os.ProcAttr
	// reply receives the result.
	reply chan startResult
}

// startResult is os.StartProcess's result.
type startResult struct {
	// p is the started supervisor, nil on error.
	p *os.Process
	// err is os.StartProcess's error.
	err error
}

// starter is the channel of the goroutine that starts every supervisor and
// warden.
// PR_SET_PDEATHSIG fires when the forking OS thread exits, not the process,
// and Go moves goroutines between threads: the starter locks its thread and
// never returns, so the signal fires only when the host dies.
var starter = sync.OnceValue(func() chan<- startRequest {
	ch := make(chan startRequest)
	go func() {
		runtime.LockOSThread()
		for req := range ch {
			p, err := os.StartProcess(req.exe, append([]string{req.exe}, req.args...), req.attr)
			req.reply <- startResult{p, err}
		}
	}()
	return ch
})

// startHelperProcess starts exe with args, the hidden argument and its own
// (a supervisor, or the warden), from the starter's thread.
func startHelperProcess(exe string, args []string, attr *os.ProcAttr) (*os.Process, error) {
	reply := make(chan startResult, 1)
	starter() <- startRequest{exe: exe, args: args, attr: attr, reply: reply}
	r := <-reply
	return r.p, r.err
}
