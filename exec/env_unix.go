//go:build unix

package exec

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"syscall"
	"time"
)

// loginShellEnv runs shell as an interactive login shell that prints its
// environment, in its own session and process group (killed whole when ctx
// ends), with
// stdin from the null device, and returns the environment.
func loginShellEnv(ctx context.Context, shell string) ([]string, error) {
	script := `printf '\000__AGENTGATE_ENV__\000'; command env -0`
	cmd := osexec.CommandContext(ctx, shell, "-l", "-i", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal: an interactive shell cannot stop on it
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 500 * time.Millisecond
	cmd.Env = os.Environ()
	out, err := cmd.Output()
	// Sweep what the shell may have left behind in its group.
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	env := parseEnvOutput(out)
	if len(env) == 0 {
		return nil, fmt.Errorf("login shell %s printed no environment: %v", shell, err)
	}
	return env, nil
}
