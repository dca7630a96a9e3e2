package winjob

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentgate/agentgate/exec/procspec"
)

func TestCreationFlags(t *testing.T) {
	f := creationFlags()
	for _, c := range []struct {
		name string
		bit  uint32
		want bool
	}{
		{"CREATE_SUSPENDED", createSuspended, true},
		{"CREATE_NO_WINDOW", createNoWindow, true},
		{"CREATE_NEW_PROCESS_GROUP", createNewProcessGroup, true},
		{"CREATE_BREAKAWAY_FROM_JOB", createBreakawayFromJob, false},
	} {
		if got := f&c.bit != 0; got != c.want {
			t.Errorf("creationFlags() %#x: %s set = %v, want %v", f, c.name, got, c.want)
		}
	}
}

func TestJobLimitFlags(t *testing.T) {
	f := jobLimitFlags()
	if f&jobLimitKillOnJobClose == 0 {
		t.Errorf("jobLimitFlags() %#x lacks JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE", f)
	}
	if f&(jobLimitBreakawayOK|jobLimitSilentBreakawayOK) != 0 {
		t.Errorf("jobLimitFlags() %#x allows breakaway", f)
	}
}

func TestContainmentErr(t *testing.T) {
	err := containmentErr(`C:\bin\x.exe`, "assigning the process to its job object", errors.New("Access is denied."))
	if !errors.Is(err, procspec.ErrContainment) {
		t.Fatalf("%v does not wrap ErrContainment", err)
	}
	for _, want := range []string{`C:\\bin\\x.exe`, "assigning the process", "Access is denied", "do not retry", "must fix"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not contain %q", err.Error(), want)
		}
	}
}
