package unixpg

import (
	"os"
	"os/exec"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestParsePidList(t *testing.T) {
	cases := []struct {
		in   string
		want []int
	}{
		{"", nil},
		{"12 13 ", []int{12, 13}},
		{"7\n", []int{7}},
		{"x 0 -2 9", []int{9}},
	}
	for _, c := range cases {
		if got := parsePidList([]byte(c.in)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("parsePidList(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestAliveTreatsZombieAsDead(t *testing.T) {
	cmd := exec.Command("/bin/sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Fatalf("Alive(%d) = false for a running sleep", pid)
	}
	// Kill without reaping: the child stays a zombie until Wait.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if Alive(pid) {
		t.Errorf("Alive(%d) = true for a killed, unreaped (zombie) child", pid)
	}
	_ = cmd.Wait()
	if Alive(pid) {
		t.Errorf("Alive(%d) = true after reaping", pid)
	}
	if Alive(0) || Alive(-1) {
		t.Error("Alive of a non-positive pid must be false")
	}
}

func TestDescendantsFindsGrandchildren(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 1000 & sleep 1000 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	var found []int
	for time.Now().Before(deadline) {
		found = descendants()
		if len(found) >= 3 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !slices.Contains(found, cmd.Process.Pid) || len(found) < 3 {
		t.Fatalf("descendants() = %v, want the shell %d and its two sleeps", found, cmd.Process.Pid)
	}
	byScan := descendantsByScan(os.Getpid())
	for _, pid := range found {
		if Alive(pid) && !slices.Contains(byScan, pid) {
			t.Errorf("descendantsByScan misses %d (children-file walk found %v, scan %v)", pid, found, byScan)
		}
	}
	// Only the shell's tree: the test process has other children (idle
	// supervisors in the pool).
	for _, pid := range append(descendantsByScan(cmd.Process.Pid), cmd.Process.Pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
