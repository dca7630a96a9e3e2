package cli

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

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
// it does — that it serves without windows, and why. The app gets appEnv
// of this process's environment.
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
	cmd.Env = appEnv(os.Environ())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, out, out
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// notTakenByApp are variables of `agentgate mcp`'s environment that the
// app it starts does not take, beyond those exec.CleanEnv leaves out: the
// cache directory is where the app's runs may write, and the data
// directory is where programs find plugins and applications; an MCP
// client's configuration (a repository's .mcp.json) chooses neither for
// the person's app. The app uses the account's defaults for them.
var notTakenByApp = []string{"XDG_CACHE_HOME", "XDG_DATA_HOME"}

// appEnv is the environment of the app `agentgate mcp` starts:
// exec.CleanEnv of inherited (so whatever an MCP client's configuration
// set that steers what programs load or run — LD_PRELOAD,
// GIT_CONFIG_GLOBAL, HOME, XDG_CONFIG_HOME… — reaches neither the app nor,
// through it, any run) without notTakenByApp. agentgate's own state
// directory and socket (XDG_STATE_HOME, XDG_RUNTIME_DIR, AGENTGATE_SOCKET)
// are taken, so that the app serves the socket `agentgate mcp` waits on:
// runMCP has refused them before starting the app if they lie inside its
// project or where commands may write (prefs.CheckDirs), and the app
// checks them again against the places commands may write.
func appEnv(inherited []string) []string {
	env := exec.CleanEnv(inherited)
	kept := env[:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(notTakenByApp, func(n string) bool {
			return n == name || (runtime.GOOS == "windows" && strings.EqualFold(n, name))
		}) {
			kept = append(kept, kv)
		}
	}
	return kept
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
