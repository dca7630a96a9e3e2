package cli

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"

	"github.com/agentgate/agentgate/exec"
)

// appLogMax is the size beyond which the app's log is started afresh.
const appLogMax = 1 << 20

// startAppDetached starts the desktop app (the agentgate binary with no
// arguments) with stdin on the null device and its output appended to
// <stateDir>/app.log (created 0600; started afresh beyond appLogMax; the
// null device when the log cannot be opened), detached as this platform
// allows (detachedAttr), so that it outlives `agentgate mcp` and its MCP
// client; it does not wait for it. The log is where such an app says what
// it does — that it serves without windows, and why. The app gets exec.CleanEnv of this
// process's environment: whatever an MCP client's configuration (a
// repository's .mcp.json) set for `agentgate mcp` that steers what programs
// load or run — LD_PRELOAD, GIT_CONFIG_GLOBAL, XDG_CONFIG_HOME… — does not
// reach the app or, through it, any run.
func startAppDetached(executable, stateDir string) error {
	if executable == "" {
		return fmt.Errorf("the agentgate executable is unknown")
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	out := devnull
	if log, err := openAppLog(filepath.Join(stateDir, "app.log")); err == nil {
		defer log.Close()
		out = log
	}
	cmd := osexec.Command(executable)
	cmd.Env = exec.CleanEnv(os.Environ())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, out, out
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// openAppLog opens path for appending (0600, its directory 0700), emptied
// first when it holds more than appLogMax bytes.
func openAppLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if fi, err := os.Stat(path); err == nil && fi.Size() > appLogMax {
		flags |= os.O_TRUNC
	}
	return os.OpenFile(path, flags, 0o600)
}
