// Package asuser runs a test binary's tests again as an unprivileged user
// that it creates. CI runs as root, and root may do what a user may not
// (trace a non-dumpable process, write anywhere): the adversarial tests of
// confinement must hold for the user agentgate really serves, so they run
// twice — as root, and as a fresh user through useradd and setpriv.
package asuser

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agentgate/agentgate/unixpg/shimbuild"
)

// Env is set in the environment of the tests Run starts, so that they do
// not start themselves again.
const Env = "AGENTGATE_TEST_UNPRIVILEGED"

// Active reports whether this test binary was started by Run.
func Active() bool { return os.Getenv(Env) == "1" }

// Run runs this test binary's tests matching pattern as a new unprivileged
// user (created with useradd, removed with userdel after), with a home of
// its own and the confinement shim copied where it can read it; t fails
// with their output if they fail. It skips unless the process runs as root
// with useradd, userdel and setpriv, and inside such a run.
func Run(t *testing.T, pattern string) {
	t.Helper()
	if Active() {
		t.Skip("already running as the unprivileged user")
	}
	if os.Geteuid() != 0 {
		t.Skip("creating a user needs root; this run is unprivileged already")
	}
	for _, tool := range []string{"useradd", "userdel", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (%v)", tool, err)
		}
	}
	name := fmt.Sprintf("agt%d", time.Now().UnixNano()%1e9)
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
		"--shell", "/usr/sbin/nologin", "--user-group", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v\n%s", name, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)

	dir, err := os.MkdirTemp("", "agentgate-asuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	CopyExecutable(t, self, bin)
	env := []string{Env + "=1", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
	if shim, err := shimbuild.Path(); err == nil {
		CopyExecutable(t, shim, filepath.Join(dir, "agentgate-shim"))
		env = append(env, shimbuild.Env+"="+filepath.Join(dir, "agentgate-shim"))
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, uid, gid); err != nil {
		t.Fatal(err)
	}
	env = append(env, "HOME="+home, "TMPDIR="+home)
	cmd := exec.Command("setpriv", "--reuid="+u.Uid, "--regid="+u.Gid, "--clear-groups", "--",
		bin, "-test.run="+pattern, "-test.count=1", "-test.v")
	cmd.Env = env
	cmd.Dir = home
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as the unprivileged user %s (uid %d): %v\n%s", name, uid, err, out)
	}
	t.Logf("as the unprivileged user %s (uid %d):\n%s", name, uid, out)
}

// CopyExecutable copies the file src to dst, readable and executable by
// everyone (mode 0755), so that another user can run it; it fails t on
// any error.
func CopyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
