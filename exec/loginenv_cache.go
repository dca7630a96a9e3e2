package exec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
)

// LoginEnvMaxAge is how long a login environment kept by UseLoginEnvCache
// is used before the login shell is asked again.
const LoginEnvMaxAge = time.Hour

// loginEnvCacheName is the cache's file name in the state directory.
const loginEnvCacheName = "login-env"

// loginEnvCache is where LoginEnv keeps what it computed ("": nowhere).
var loginEnvCache struct {
	mu   sync.Mutex
	path string
}

// UseLoginEnvCache makes LoginEnv keep the login environment in
// <stateDir>/login-env (mode 0600) and take it from there, when it was
// computed for the same account (user, home, shell) less than
// LoginEnvMaxAge ago and no shell start-up file (loginStartupFiles) changed
// since: a login shell costs 50 ms to a second, paid otherwise by every
// `agentgate run`. The file is as trusted as the rest of the state
// directory (the audit log, the run records); a file not owned by this user
// or readable by others is ignored. Call it before LoginEnv; "" turns it
// off.
func UseLoginEnvCache(stateDir string) {
	loginEnvCache.mu.Lock()
	defer loginEnvCache.mu.Unlock()
	if stateDir == "" {
		loginEnvCache.path = ""
		return
	}
	loginEnvCache.path = filepath.Join(stateDir, loginEnvCacheName)
}

// cachedLoginEnv returns the kept login environment of acct, or nil.
func cachedLoginEnv(acct account, now time.Time) []string {
	loginEnvCache.mu.Lock()
	path := loginEnvCache.path
	loginEnvCache.mu.Unlock()
	if path == "" {
		return nil
	}
	f, err := atomicfile.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !privateFile(fi) || now.Sub(fi.ModTime()) > LoginEnvMaxAge || now.Before(fi.ModTime()) {
		return nil
	}
	for _, p := range loginStartupFiles(acct.Home) {
		if sf, err := os.Stat(p); err == nil && !sf.ModTime().Before(fi.ModTime()) {
			return nil
		}
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil
	}
	fields := strings.Split(buf.String(), "\x00")
	if len(fields) < 4 || fields[0] != cacheHeader(acct) {
		return nil
	}
	env := fields[1 : len(fields)-1] // the file ends with a NUL
	if envValue(env, "PATH") == "" {
		return nil
	}
	return env
}

// keepLoginEnv writes env for acct to the cache, if one is set (best
// effort: a failure only costs the next process a login shell).
func keepLoginEnv(acct account, env []string) {
	loginEnvCache.mu.Lock()
	path := loginEnvCache.path
	loginEnvCache.mu.Unlock()
	if path == "" {
		return
	}
	var buf bytes.Buffer
	buf.WriteString(cacheHeader(acct))
	buf.WriteByte(0)
	for _, kv := range env {
		buf.WriteString(kv)
		buf.WriteByte(0)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	_ = writeFileAtomic(path, buf.Bytes(), false)
}

// cacheHeader identifies the account a cached environment was read for.
func cacheHeader(acct account) string {
	return "agentgate login-env 1 user=" + acct.User + " home=" + acct.Home + " shell=" + acct.Shell
}

// loginStartupFiles are the files login shells read at start-up (bash,
// zsh, sh, fish, and the system-wide ones); a change to any of them makes
// the kept login environment stale.
func loginStartupFiles(home string) []string {
	files := []string{"/etc/profile", "/etc/profile.d", "/etc/bash.bashrc", "/etc/bashrc", "/etc/environment",
		"/etc/zshenv", "/etc/zprofile", "/etc/zshrc", "/etc/zlogin", "/etc/zsh/zshenv", "/etc/zsh/zprofile", "/etc/zsh/zshrc",
		"/etc/zsh/zlogin", "/etc/paths", "/etc/paths.d", "/etc/fish/config.fish"}
	if home != "" {
		for _, f := range []string{".profile", ".bash_profile", ".bash_login", ".bashrc", ".zshenv", ".zprofile", ".zshrc",
			".zlogin", ".config/fish/config.fish", ".pam_environment"} {
			files = append(files, filepath.Join(home, f))
		}
	}
	return files
}
