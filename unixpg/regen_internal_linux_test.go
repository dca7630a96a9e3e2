package unixpg

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestHeldStatusSeesEachChange holds a child's /proc/PID/status open and
// checks that every look reads the state of that moment (SIGSTOP, then
// SIGCONT), that a look after the child was reaped finds nothing, and that
// a look through a closed descriptor fails rather than reading another file.
func TestHeldStatusSeesEachChange(t *testing.T) {
	cmd := exec.Command("/bin/sleep", "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	f := openProcStatus(cmd.Process.Pid)
	if f == nil {
		t.Fatal("cannot open the child's /proc status")
	}
	defer f.Close()
	waitFor := func(what string, want string) {
		t.Helper()
		for i := 0; i < 500; i++ {
			if got := inspectSupervisor(cmd.Process.Pid, f); got == want {
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Fatalf("%s: inspectSupervisor through the held status = %q, want %q", what, inspectSupervisor(cmd.Process.Pid, f), want)
	}
	waitFor("running", "")
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor("stopped", "its supervisor was stopped (SIGSTOP)")
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor("continued", "")
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := readHeldStatus(f); err == nil {
		t.Error("the held status of a reaped child still reads")
	}
	f.Close()
	if st, err := readHeldStatus(f); err == nil {
		t.Errorf("reading a closed held status gave %+v and no error", st)
	}
}

// TestHeldCgroupEventsFollowTheRun checks populated through the held
// cgroup.events of a run cgroup: false while empty, true with a process in
// it, false again once it is gone, and by path once the cgroup was removed.
func TestHeldCgroupEventsFollowTheRun(t *testing.T) {
	base, why := CgroupBase()
	if base == "" {
		t.Skip("no per-run cgroups here:", why)
	}
	cg, dir, err := makeRunCgroup(base)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.discard(dir)
	if cg.events == nil {
		t.Fatal("the run cgroup's cgroup.events is not held")
	}
	if cg.populated() {
		t.Fatal("a new cgroup is populated")
	}
	cmd := exec.Command("/bin/sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(dir.Fd())}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !cg.populated() {
		t.Error("the cgroup with a sleep in it is not populated")
	}
	cmd.Process.Kill()
	cmd.Wait()
	for i := 0; cg.populated(); i++ {
		if i == 500 {
			t.Fatal("the cgroup is still populated 1 s after its only process was reaped")
		}
		time.Sleep(2 * time.Millisecond)
	}
	cg.removeNow()
	if _, err := os.Stat(cg.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cgroup %s is still there after removeNow: %v", cg.dir, err)
	}
	if cg.populated() {
		t.Error("a removed cgroup is populated")
	}
}
