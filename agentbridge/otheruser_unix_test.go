//go:build unix

package agentbridge_test

import (
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/bridgetest"
	"github.com/agentgate/agentgate/agentbridge/client"
	"github.com/agentgate/agentgate/unixpg/asuser"
)

// nobody is the uid the child runs as.
const nobody = 65534

// TestOtherUserRefusedAtAccept connects as another uid — the test binary
// re-executed with SysProcAttr.Credential — after the socket and its
// directory were opened to everyone (0777): the peer-credential check alone
// must close the connection, unanswered, and audit it.
func TestOtherUserRefusedAtAccept(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a child as another uid")
	}
	b := bridgetest.Start(t, bridgetest.Options{})
	for _, p := range []string{filepath.Dir(b.Socket), b.Socket} {
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	bin, binDir := testBinaryForOthers(t)
	cmd := osexec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), envDialAsOtherUser+"="+b.Socket)
	cmd.Dir = binDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if code != dialRefused {
		t.Fatalf("child exit %d (%v): %s — want the connection closed unanswered", code, err, out)
	}
	deadline := time.Now().Add(eventually)
	for {
		for _, e := range b.AuditEntries(t) {
			if e.Kind == audit.KindConnectionRefused && e.PeerUID != nil && *e.PeerUID == nobody && e.PeerPID > 0 {
				// A same-user connection is still served.
				dialRaw(t, b).hello(b)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection_refused entry for uid %d in the audit log", nobody)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testBinaryForOthers copies the test binary into a world-readable
// directory so that another uid can execute it.
func testBinaryForOthers(t *testing.T) (bin, dir string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "agbin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "bridge.test")
	asuser.CopyExecutable(t, self, bin)
	return bin, dir
}

// TestClientRefusesBridgeOfOtherUser starts a fake bridge as another uid and
// checks that client.Dial refuses to talk to it: its answers (a hook's
// "allow") could not be trusted.
func TestClientRefusesBridgeOfOtherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a child as another uid")
	}
	bin, dir := testBinaryForOthers(t)
	sockDir := filepath.Join(dir, "s")
	os.Mkdir(sockDir, 0o777)
	os.Chmod(sockDir, 0o777)
	sock := filepath.Join(sockDir, "bridge.sock")
	cmd := osexec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), envServeAsOtherUser+"="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	ready := make([]byte, 6)
	if _, err := io.ReadFull(stdout, ready); err != nil || string(ready) != "ready\n" {
		t.Fatalf("fake bridge did not start: %q %v", ready, err)
	}
	c, err := client.Dial(sock)
	if err == nil {
		c.Close()
		t.Fatalf("client.Dial trusted a bridge served by uid %d", nobody)
	}
	if !strings.Contains(err.Error(), "65534") {
		t.Fatalf("error does not name the serving uid: %v", err)
	}
}
