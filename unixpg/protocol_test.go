package unixpg

import (
	"strings"
	"testing"
	"time"
)

func TestStatusRoundTrip(t *testing.T) {
	cases := []statusMsg{
		{Verb: statusStarted, Num: 4242},
		{Verb: statusExited, Num: 0},
		{Verb: statusExited, Num: 255},
		{Verb: statusSignaled, Num: 9},
		{Verb: statusRefused, Text: "prctl: operation not permitted\nsecond line \"quoted\""},
		{Verb: statusExecFail, Num: 2, Text: "no such file or directory"},
		{Verb: statusExecFail, Num: 13, Text: ""},
	}
	for _, want := range cases {
		line := formatStatus(want)
		if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 {
			t.Errorf("formatStatus(%+v) = %q: want exactly one trailing newline", want, line)
		}
		got, err := parseStatus(line)
		if err != nil || got != want {
			t.Errorf("parseStatus(%q) = %+v, %v; want %+v", line, got, err, want)
		}
	}
}

func TestParseStatusRejects(t *testing.T) {
	for _, line := range []string{
		"", "started", "started x", "started 0", "started -5", "signaled 0", "exited",
		"refused unquoted text", "execfail 2", "execfail x \"a\"", "execfail -1 \"a\"",
		"hello 1", "STARTED 12",
	} {
		if got, err := parseStatus(line); err == nil {
			t.Errorf("parseStatus(%q) = %+v, want an error", line, got)
		}
	}
}

func TestWireSpec(t *testing.T) {
	b, err := encodeWireSpec(Spec{Path: "/bin/echo", Args: []string{"echo", "a\nb"}, Env: []string{"A=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), "\n") != 1 || b[len(b)-1] != '\n' {
		t.Fatalf("encoded spec %q must be one line", b)
	}
	ws, err := decodeWireSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Path != "/bin/echo" || len(ws.Args) != 2 || ws.Args[1] != "a\nb" || ws.Env[0] != "A=1" {
		t.Errorf("round trip gave %+v", ws)
	}
	if time.Duration(ws.GraceNS) != DefaultGrace {
		t.Errorf("zero grace became %v, want %v", time.Duration(ws.GraceNS), DefaultGrace)
	}
	b, _ = encodeWireSpec(Spec{Path: "/x", Args: []string{"x"}, Grace: -time.Second})
	if ws, _ := decodeWireSpec(b); time.Duration(ws.GraceNS) != DefaultGrace {
		t.Errorf("negative grace became %v, want %v", time.Duration(ws.GraceNS), DefaultGrace)
	}
	b, _ = encodeWireSpec(Spec{Path: "/x", Args: []string{"x"}, Grace: 300 * time.Millisecond})
	if ws, _ := decodeWireSpec(b); time.Duration(ws.GraceNS) != 300*time.Millisecond {
		t.Errorf("grace became %v, want 300ms", time.Duration(ws.GraceNS))
	}
	for _, bad := range []string{`not json`, `{"path":"","args":["x"],"grace_ns":1}`,
		`{"path":"/x","args":[],"grace_ns":1}`, `{"path":"/x","args":["x"],"grace_ns":0}`} {
		if _, err := decodeWireSpec([]byte(bad)); err == nil {
			t.Errorf("decodeWireSpec(%s) succeeded, want an error", bad)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	cases := []struct {
		line  string
		state byte
		ppid  int
		ok    bool
	}{
		{"1234 (sleep) S 1 1234 1234 0 -1 4194560", 'S', 1, true},
		{"77 (a b) c)) Z 12 77 77", 'Z', 12, true},
		{"5 ((sd-pam)) R 0 5", 'R', 0, true},
		{"5 (x) RR 1", 0, 0, false},
		{"5 (x) S", 0, 0, false},
		{"5 (x) S -3", 0, 0, false},
		{"no parenthesis S 1", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, c := range cases {
		st, ok := parseProcStat([]byte(c.line))
		if ok != c.ok || (ok && (st.state != c.state || st.ppid != c.ppid)) {
			t.Errorf("parseProcStat(%q) = %+v, %v; want state %q ppid %d ok %v", c.line, st, ok, c.state, c.ppid, c.ok)
		}
	}
}

func TestExitStatusString(t *testing.T) {
	cases := []struct {
		s    ExitStatus
		want string
	}{
		{ExitStatus{Code: 0, Exited: true}, "exit status 0"},
		{ExitStatus{Code: 3, Exited: true}, "exit status 3"},
		{ExitStatus{Code: -1, Signal: "SIGKILL"}, "signal: SIGKILL"},
	}
	for _, c := range cases {
		if got := c.s.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.s, got, c.want)
		}
	}
}
