package procspec

import "testing"

func TestExitStatusString(t *testing.T) {
	cases := []struct {
		st   ExitStatus
		want string
	}{
		{ExitStatus{Code: 0, Exited: true}, "exit status 0"},
		{ExitStatus{Code: 3, Exited: true}, "exit status 3"},
		{ExitStatus{Code: -1, Signal: "SIGKILL"}, "signal: SIGKILL"},
		{ExitStatus{Code: -1, Signal: "TerminateJobObject"}, "signal: TerminateJobObject"},
	}
	for _, tc := range cases {
		if got := tc.st.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.st, got, tc.want)
		}
	}
}
