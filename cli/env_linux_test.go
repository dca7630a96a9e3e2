package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// steeringEnv is what an agent (or a repository's .mcp.json) sets to make
// an allowed command run its code: a preloaded library, a bash start-up
// file and a git configuration whose fsmonitor runs a program. Each of
// them, if it took effect, creates a file in dir.
func steeringEnv(t *testing.T, dir string) []string {
	t.Helper()
	evilRC := filepath.Join(dir, "evil.sh")
	if err := os.WriteFile(evilRC, []byte("touch "+filepath.Join(dir, "bash_env_ran")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	evilGit := filepath.Join(dir, "evil.gitconfig")
	if err := os.WriteFile(evilGit, []byte("[core]\n\tfsmonitor = touch "+filepath.Join(dir, "fsmonitor_ran")+"\n[alias]\n\tst = !touch "+filepath.Join(dir, "alias_ran")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"LD_PRELOAD=" + filepath.Join(dir, "evil.so"), "BASH_ENV=" + evilRC, "GIT_CONFIG_GLOBAL=" + evilGit}
}

// assertNoneRan checks that no steering variable took effect in a run.
func assertNoneRan(t *testing.T, dir, output string) {
	t.Helper()
	for _, marker := range []string{"bash_env_ran", "fsmonitor_ran", "alias_ran"} {
		if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
			t.Errorf("%s exists: a variable of the caller steered the run", marker)
		}
	}
	for _, name := range []string{"LD_PRELOAD=", "BASH_ENV=", "GIT_CONFIG_GLOBAL="} {
		for _, line := range strings.Split(output, "\n") {
			if strings.HasPrefix(line, name) && strings.Contains(line, dir) {
				t.Errorf("the run's environment holds the caller's %s", line)
			}
		}
	}
}

// TestRunDropsTheCallersSteeringVariables: `LD_PRELOAD=… BASH_ENV=…
// GIT_CONFIG_GLOBAL=… agentgate run -- …` runs the allowed command without
// them (they are not in the person's login environment).
func TestRunDropsTheCallersSteeringVariables(t *testing.T) {
	s := newCLISandbox(t, "bash -c\ngit\n")
	evil := t.TempDir()
	s.environ = append(s.environ, steeringEnv(t, evil)...)
	s.environ = append(s.environ, "AGENTGATE_TEST_HARMLESS=kept")
	code, stdout, stderr := runCLI(t, s, "run", "--", "bash", "-c", "env; git st; git -C . status --porcelain >/dev/null 2>&1; true")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	assertNoneRan(t, evil, stdout)
	if !strings.Contains(stdout, "AGENTGATE_TEST_HARMLESS=kept") {
		t.Errorf("a harmless variable of the caller was dropped:\n%s", stdout)
	}
	if !strings.Contains(stdout, "\nPATH=") && !strings.HasPrefix(stdout, "PATH=") {
		t.Errorf("the run has no PATH:\n%s", stdout)
	}
}

// TestMCPStartsTheAppWithoutSteeringVariables: the app `agentgate mcp`
// starts does not get what an MCP client's configuration set for the MCP
// server (LD_PRELOAD, BASH_ENV, GIT_CONFIG_GLOBAL, XDG_CONFIG_HOME), so
// neither the app nor any of its runs does.
func TestMCPStartsTheAppWithoutSteeringVariables(t *testing.T) {
	dir := t.TempDir()
	for _, kv := range steeringEnv(t, dir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "evil-config"))
	t.Setenv("AGENTGATE_TEST_HARMLESS", "kept")
	marker := filepath.Join(dir, "env")
	script := filepath.Join(dir, "app")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nenv > "+marker+".tmp\nmv "+marker+".tmp "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := startAppDetached(script, dir); err != nil {
		t.Fatal(err)
	}
	var data []byte
	deadline := time.Now().Add(eventually)
	for {
		var err error
		if data, err = os.ReadFile(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stand-in app never ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	assertNoneRan(t, dir, string(data))
	if strings.Contains(string(data), "evil-config") {
		t.Errorf("the app got the MCP server's XDG_CONFIG_HOME:\n%s", data)
	}
	if !strings.Contains(string(data), "AGENTGATE_TEST_HARMLESS=kept") {
		t.Errorf("a harmless variable was dropped:\n%s", data)
	}
}
