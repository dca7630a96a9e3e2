//go:build unix

package exec

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultPath is the PATH of MinimalEnv: the system directories every Unix
// has; the login shell's start-up files add the person's own.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// readLoginEnv runs the account's login shell as an interactive login shell
// that prints its environment, from env, in its own session and process
// group (killed whole when ctx ends), with stdin from the null device, and
// returns the environment.
func readLoginEnv(ctx context.Context, acct account, env []string) ([]string, error) {
	return loginShellEnv(ctx, acct.Shell, env)
}

// loginShellEnv runs shell as readLoginEnv describes.
func loginShellEnv(ctx context.Context, shell string, env []string) ([]string, error) {
	script := `printf '\000__AGENTGATE_ENV__\000'; command env -0`
	cmd := osexec.CommandContext(ctx, shell, "-l", "-i", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal: an interactive shell cannot stop on it
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 500 * time.Millisecond
	cmd.Env = env
	if home := envValue(env, "HOME"); home != "" {
		cmd.Dir = home
	}
	out, err := cmd.Output()
	// Sweep what the shell may have left behind in its group.
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	parsed := parseEnvOutput(out)
	if len(parsed) == 0 {
		return nil, fmt.Errorf("login shell %s printed no environment: %v", shell, err)
	}
	return parsed, nil
}

// currentAccount looks this process's user up in the account database:
// name and home through os/user (getpwuid_r, or /etc/passwd without cgo),
// the login shell through shellOf. Where the database does not know the
// user (a container's arbitrary uid), os/user falls back to $USER and
// $HOME, and the shell is /bin/sh.
func currentAccount() account {
	var acct account
	if u, err := user.Current(); err == nil {
		acct.User, acct.Home = u.Username, u.HomeDir
	}
	acct.Shell = shellOf(os.Getuid(), acct.User)
	return acct
}

// shellOf returns the login shell of uid: its /etc/passwd entry, else the
// account database through `getent passwd` (LDAP, NSS) or, on macOS,
// Directory Services (`dscl`); else $SHELL when /etc/shells lists it; else
// /bin/sh. Only an absolute path is taken.
func shellOf(uid int, name string) string {
	if sh := passwdShell(uid); sh != "" {
		return sh
	}
	var out []byte
	if runtime.GOOS == "darwin" && name != "" {
		out, _ = quietOutput("/usr/bin/dscl", ".", "-read", "/Users/"+name, "UserShell")
		if _, v, ok := bytes.Cut(out, []byte("UserShell:")); ok {
			if sh := strings.TrimSpace(string(v)); filepath.IsAbs(sh) {
				return sh
			}
		}
	} else if out, _ = quietOutput("getent", "passwd", strconv.Itoa(uid)); len(out) > 0 {
		if sh := passwdField(string(out), uid); sh != "" {
			return sh
		}
	}
	if sh := os.Getenv("SHELL"); filepath.IsAbs(sh) && listedShell(sh) {
		return sh
	}
	return "/bin/sh"
}

// quietOutput runs a lookup program from DefaultPath with an empty
// environment, bounded to a second, and returns its standard output.
func quietOutput(prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if !filepath.IsAbs(prog) {
		found := ""
		for _, dir := range filepath.SplitList(DefaultPath) {
			if fi, err := os.Stat(filepath.Join(dir, prog)); err == nil && fi.Mode().IsRegular() {
				found = filepath.Join(dir, prog)
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("%s not found", prog)
		}
		prog = found
	}
	cmd := osexec.CommandContext(ctx, prog, args...)
	cmd.Env = []string{"PATH=" + DefaultPath}
	return cmd.Output()
}

// passwdShell returns the shell of uid's entry in /etc/passwd, or "".
func passwdShell(uid int) string {
	data, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return ""
	}
	return passwdField(string(data), uid)
}

// passwdField returns the shell (seventh field) of the first passwd(5)
// line with uid, when it is an absolute path; else "".
func passwdField(data string, uid int) string {
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) < 7 || f[2] != strconv.Itoa(uid) {
			continue
		}
		if sh := strings.TrimSpace(f[6]); filepath.IsAbs(sh) {
			return sh
		}
		return ""
	}
	return ""
}

// listedShell reports whether /etc/shells lists sh.
func listedShell(sh string) bool {
	data, err := os.ReadFile("/etc/shells")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == sh {
			return true
		}
	}
	return false
}

// privateFile reports whether fi is a regular file of this user that no one
// else may read or write.
func privateFile(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().IsRegular() && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o077 == 0
}
