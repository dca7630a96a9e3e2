package exec

import (
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
)

// testHelperArg, as argv[1] of this package's test binary, makes the binary
// a small helper program instead of a test run (TestMain calls
// runTestHelper). The executor's tests run it as the command: it is built
// for the target with the tests, so they depend on no platform utility
// (there is no sh, cat or sleep on Windows).
const testHelperArg = "agentgate-exec-test-helper"

// helperArgv returns the argv that runs the helper with verb and args; its
// argv[0] is the test binary's absolute path.
func helperArgv(t testing.TB, verb string, args ...string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("finding the test binary: %v", err)
	}
	return append([]string{self, testHelperArg, verb}, args...)
}

// runTestHelper runs the helper verb in args[0] and returns the exit code:
//
//	exit CODE [OUT [ERR]]  writes OUT to stdout and ERR to stderr, exits CODE
//	bytes                  writes "a\x00b\xff" to stdout (output is bytes, not text)
//	cat                    copies stdin to stdout, then exits 0
//	sleep                  sleeps until killed
//	started-sleep          writes "started\n", then sleeps until killed
//	spawn PIDFILE THEN     starts "sleep" as a child (a grandchild of the run)
//	                       sharing stdout and stderr, writes "LEADER CHILD"
//	                       pids to PIDFILE (atomically), writes "started\n",
//	                       then exits 0 (THEN=exit) or sleeps (THEN=sleep)
//	host STATE ROOT PIDFILE  an executor host: runs "spawn PIDFILE sleep" in
//	                       project ROOT with state in STATE, then sleeps
//	                       until killed (the host's death ends the run)
//	ptrace PID             attaches to PID with ptrace (Linux) and prints
//	                       "attached" (exit 0) or "denied: ERROR" (exit 1)
//
// A wrong verb or argument count exits 2 with a message on stderr.
func runTestHelper(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "exec test helper: "+format+"\n", a...)
		return 2
	}
	if len(args) == 0 {
		return fail("no verb")
	}
	sleepForever := func() int {
		for {
			time.Sleep(time.Hour)
		}
	}
	switch verb, args := args[0], args[1:]; verb {
	case "exit":
		if len(args) < 1 || len(args) > 3 {
			return fail("usage: exit CODE [OUT [ERR]]")
		}
		code, err := strconv.Atoi(args[0])
		if err != nil {
			return fail("exit code %q: %v", args[0], err)
		}
		if len(args) > 1 {
			os.Stdout.WriteString(args[1])
		}
		if len(args) > 2 {
			os.Stderr.WriteString(args[2])
		}
		return code
	case "bytes":
		os.Stdout.Write([]byte("a\x00b\xff"))
		return 0
	case "cat":
		if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
			return fail("cat: %v", err)
		}
		return 0
	case "sleep":
		return sleepForever()
	case "started-sleep":
		os.Stdout.WriteString("started\n")
		return sleepForever()
	case "spawn":
		if len(args) != 2 || (args[1] != "exit" && args[1] != "sleep") {
			return fail("usage: spawn PIDFILE exit|sleep")
		}
		self, err := os.Executable()
		if err != nil {
			return fail("spawn: %v", err)
		}
		child := osexec.Command(self, testHelperArg, "sleep")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		if err := child.Start(); err != nil {
			return fail("spawn: %v", err)
		}
		pids := fmt.Sprintf("%d %d", os.Getpid(), child.Process.Pid)
		if err := atomicfile.WriteFile(args[0], []byte(pids), 0o600); err != nil {
			return fail("spawn: %v", err)
		}
		os.Stdout.WriteString("started\n")
		if args[1] == "exit" {
			return 0
		}
		return sleepForever()
	case "host":
		if len(args) != 3 {
			return fail("usage: host STATE ROOT PIDFILE")
		}
		e, err := New(Config{StateDir: args[0], HostKind: HostCLI})
		if err != nil {
			return fail("host: %v", err)
		}
		self, err := os.Executable()
		if err != nil {
			return fail("host: %v", err)
		}
		cmd, err := Validate(Proposal{Argv: []string{self, testHelperArg, "spawn", args[2], "sleep"}, ProjectRoot: args[1]}, "")
		if err != nil {
			return fail("host: %v", err)
		}
		if _, err := e.Start(cmd, Meta{ID: "hosted"}); err != nil {
			return fail("host: %v", err)
		}
		e.Flush()
		return sleepForever()
	case "ptrace":
		if len(args) != 1 {
			return fail("usage: ptrace PID")
		}
		pid, err := strconv.Atoi(args[0])
		if err != nil {
			return fail("ptrace pid %q: %v", args[0], err)
		}
		if err := ptraceAttach(pid); err != nil {
			fmt.Println("denied:", err)
			return 1
		}
		fmt.Println("attached")
		return 0
	default:
		return fail("unknown verb %q", verb)
	}
}

// TestHelperRefusesBadUsage checks the helper's own argument handling, so
// that a typo in a test shows as exit status 2 with a message rather than as
// a confusing run.
func TestHelperRefusesBadUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"nope"}, {"exit"}, {"exit", "x"}, {"spawn", "f"}, {"host"}} {
		if code := runTestHelper(args); code != 2 {
			t.Errorf("runTestHelper(%q) = %d, want 2", args, code)
		}
	}
}
