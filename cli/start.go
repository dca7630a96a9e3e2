package cli

import (
	"fmt"
	"os"
	osexec "os/exec"

	"github.com/agentgate/agentgate/exec"
)

// startAppDetached starts the desktop app (the agentgate binary with no
// arguments) with stdio on the null device and detached as this platform
// allows (detachedAttr), so that it outlives `agentgate mcp` and its MCP
// client; it does not wait for it. The app gets exec.CleanEnv of this
// process's environment: whatever an MCP client's configuration (a
// repository's .mcp.json) set for `agentgate mcp` that steers what programs
// load or run — LD_PRELOAD, GIT_CONFIG_GLOBAL, XDG_CONFIG_HOME… — does not
// reach the app or, through it, any run.
func startAppDetached(executable string) error {
	if executable == "" {
		return fmt.Errorf("the agentgate executable is unknown")
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	cmd := osexec.Command(executable)
	cmd.Env = exec.CleanEnv(os.Environ())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
