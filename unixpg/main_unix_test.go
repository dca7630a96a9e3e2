//go:build unix

package unixpg_test

import (
	"bufio"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/agentgate/agentgate/unixpg"
)

// hostDirEnv, when set, makes the test binary a helper host (see runTestHost).
const hostDirEnv = "UNIXPG_TEST_HOST_DIR"

func TestMain(m *testing.M) {
	unixpg.MaybeSupervise()
	if dir := os.Getenv(hostDirEnv); dir != "" {
		runTestHost(dir)
		return
	}
	os.Exit(m.Run())
}

// runTestHost is a host process for the host-death tests: it starts the
// adversarial tree in dir through unixpg, prints "started PID", and then
// waits for a line on stdin (or its end) and exits without ending the run,
// as an app that quits or crashes would. The test may SIGKILL it instead.
func runTestHost(dir string) {
	p, err := unixpg.Start(treeSpec(dir, "ignore", nil))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Printf("started %d\n", p.Pid())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}

// treeSpec runs leader.sh (written by writeTreeScripts) in dir with the
// given mode and stdout, with a short grace so that tests are quick.
func treeSpec(dir, mode string, stdout *os.File) unixpg.Spec {
	return unixpg.Spec{
		Path:   "/bin/sh",
		Args:   []string{"sh", dir + "/leader.sh", mode},
		Dir:    dir,
		Env:    []string{"D=" + dir, "PATH=/usr/local/bin:/usr/bin:/bin"},
		Stdout: stdout,
		Grace:  300 * time.Millisecond,
	}
}
