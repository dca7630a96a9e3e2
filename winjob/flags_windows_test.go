//go:build windows

package winjob

import (
	"testing"

	"golang.org/x/sys/windows"

	"github.com/agentgate/agentgate/exec/procspec"
)

// TestConstantsMatchWindows checks the constants spelled out in flags.go
// against x/sys/windows (compiled with GOOS=windows go test -c).
func TestConstantsMatchWindows(t *testing.T) {
	cases := []struct {
		name      string
		ours, sys uint32
	}{
		{"CREATE_SUSPENDED", createSuspended, windows.CREATE_SUSPENDED},
		{"CREATE_NEW_PROCESS_GROUP", createNewProcessGroup, windows.CREATE_NEW_PROCESS_GROUP},
		{"CREATE_BREAKAWAY_FROM_JOB", createBreakawayFromJob, windows.CREATE_BREAKAWAY_FROM_JOB},
		{"CREATE_NO_WINDOW", createNoWindow, windows.CREATE_NO_WINDOW},
		{"JOB_OBJECT_LIMIT_BREAKAWAY_OK", jobLimitBreakawayOK, windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK},
		{"JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK", jobLimitSilentBreakawayOK, windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK},
		{"JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE", jobLimitKillOnJobClose, windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	for _, c := range cases {
		if c.ours != c.sys {
			t.Errorf("%s: ours %#x, x/sys/windows %#x", c.name, c.ours, c.sys)
		}
	}
}

// TestStartRunsInJob starts cmd.exe's `exit 3` and checks the status; it
// needs Windows to run and is compiled everywhere by GOOS=windows go test -c.
func TestStartRunsInJob(t *testing.T) {
	comspec := `C:\Windows\System32\cmd.exe`
	p, err := Start(procspec.Spec{Path: comspec, Args: []string{"cmd.exe", "/c", "exit", "3"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Wait()
	if err != nil || !st.Exited || st.Code != 3 {
		t.Errorf("Wait = %+v, %v; want exit status 3", st, err)
	}
}

// TestTerminateEndsJob starts a long ping and terminates it.
func TestTerminateEndsJob(t *testing.T) {
	p, err := Start(procspec.Spec{Path: `C:\Windows\System32\PING.EXE`, Args: []string{"ping", "-n", "1000", "127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	p.Terminate()
	st, err := p.Wait()
	if err != nil || st.Exited || st.Signal != "TerminateJobObject" {
		t.Errorf("Wait = %+v, %v; want ended by TerminateJobObject", st, err)
	}
}
