package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersionAndSocketPath(t *testing.T) {
	s := newCLISandbox(t, "")
	for _, arg := range []string{"--version", "version"} {
		var out, errOut bytes.Buffer
		if code := dispatch([]string{arg}, s.env(&out, &errOut)); code != 0 {
			t.Fatalf("%s: exit %d: %s", arg, code, errOut.String())
		}
		if got, want := out.String(), Version()+"\n"; got != want || !strings.HasPrefix(got, "agentgate ") {
			t.Errorf("%s printed %q, want %q", arg, got, want)
		}
	}

	t.Setenv("AGENTGATE_SOCKET", "/tmp/agentgate-test/x.sock")
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"socket-path"}, s.env(&out, &errOut)); code != 0 || out.String() != "/tmp/agentgate-test/x.sock\n" {
		t.Errorf("socket-path: exit %d, printed %q (%s)", code, out.String(), errOut.String())
	}
	if code := dispatch([]string{"socket-path", "extra"}, s.env(&out, &errOut)); code != 2 {
		t.Errorf("socket-path with an argument: exit %d, want 2", code)
	}
}
