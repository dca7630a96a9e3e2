package unixpg

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/exec/procspec"
)

func TestStatusRoundTrip(t *testing.T) {
	cases := []statusMsg{
		{Verb: statusStarted, Num: 4242},
		{Verb: statusEnd, End: endReport{Exited: true, Code: 0}},
		{Verb: statusEnd, End: endReport{Exited: true, Code: 255, Deadline: true}},
		{Verb: statusEnd, End: endReport{Signal: 9}},
		{Verb: statusEnd, End: endReport{Signal: 15, Deadline: true, Off: "it is being traced by pid 7\n\"x\""}},
		{Verb: statusPong},
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
		"", "started", "started x", "started 0", "started -5", "exited 0", "signaled 9",
		"end", "end {}", `end {"exited":false}`, `end {"exited":true,"code":256}`, `end {"exited":true,"code":-1}`,
		`end {"exited":true,"code":0,"signal":9}`, `end {"exited":false,"signal":9,"code":3}`,
		`end {"exited":true,"code":0,"extra":1}`, `end {"exited":true,"code":0} {}`, "pong 1", "pong ",
		"refused unquoted text", "execfail 2", "execfail x \"a\"", "execfail -1 \"a\"",
		"hello 1", "STARTED 12",
	} {
		if got, err := parseStatus(line); err == nil {
			t.Errorf("parseStatus(%q) = %+v, want an error", line, got)
		}
	}
}

func TestRunLine(t *testing.T) {
	b, err := encodeRunLine(procspec.Spec{Path: "/bin/echo", Args: []string{"echo", "a\nb"}, Env: []string{"A=1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), "\n") != 1 || b[len(b)-1] != '\n' || !strings.HasPrefix(string(b), "run {") {
		t.Fatalf("encoded run %q must be one line starting with \"run {\"", b)
	}
	verb, ws, err := parseControl(b)
	if err != nil || verb != ctrlRun {
		t.Fatalf("parseControl(%q) = %q, %v", b, verb, err)
	}
	if ws.Path != "/bin/echo" || len(ws.Args) != 2 || ws.Args[1] != "a\nb" || ws.Env[0] != "A=1" {
		t.Errorf("round trip gave %+v", ws)
	}
	if time.Duration(ws.GraceNS) != procspec.DefaultGrace {
		t.Errorf("zero grace became %v, want %v", time.Duration(ws.GraceNS), procspec.DefaultGrace)
	}
	b, _ = encodeRunLine(procspec.Spec{Path: "/x", Args: []string{"x"}, Timeout: 3 * time.Second}, nil)
	if _, ws, _ := parseControl(b); time.Duration(ws.TimeoutNS) != 3*time.Second {
		t.Errorf("timeout 3s became %v", time.Duration(ws.TimeoutNS))
	}
	b, _ = encodeRunLine(procspec.Spec{Path: "/x", Args: []string{"x"}, Timeout: -time.Second}, nil)
	if _, ws, _ := parseControl(b); ws.TimeoutNS != 0 {
		t.Errorf("a negative timeout became %v, want none", time.Duration(ws.TimeoutNS))
	}
	graces := []struct {
		in, want time.Duration
	}{
		{-time.Second, procspec.DefaultGrace},
		{300 * time.Millisecond, 300 * time.Millisecond},
	}
	for _, g := range graces {
		b, _ = encodeRunLine(procspec.Spec{Path: "/x", Args: []string{"x"}, Grace: g.in}, nil)
		if _, ws, _ := parseControl(b); time.Duration(ws.GraceNS) != g.want {
			t.Errorf("grace %v became %v, want %v", g.in, time.Duration(ws.GraceNS), g.want)
		}
	}
}

func TestParseControl(t *testing.T) {
	cases := []struct {
		line, verb string
		ok         bool
	}{
		{"term\n", ctrlTerm, true},
		{"kill", ctrlKill, true},
		{"ping\n", ctrlPing, true},
		{`run {"path":"/x","args":["x"],"grace_ns":1}` + "\n", ctrlRun, true},
		{"", "", false},
		{"term ", "", false},
		{"TERM", "", false},
		{"run", "", false},
		{"run not json", "", false},
		{`run {"path":"","args":["x"],"grace_ns":1}`, "", false},
		{`run {"path":"/x","args":[],"grace_ns":1}`, "", false},
		{`run {"path":"/x","args":["x"],"grace_ns":0}`, "", false},
		{`run {"path":"/x","args":["x"],"grace_ns":1,"timeout_ns":-1}`, "", false},
		{`run {"path":"/x","args":["x"],"grace_ns":1,"timeout_ns":5}`, ctrlRun, true},
		{"hello " + strings.Repeat("x", 200), "", false},
	}
	for _, c := range cases {
		verb, _, err := parseControl([]byte(c.line))
		if (err == nil) != c.ok || (c.ok && verb != c.verb) {
			t.Errorf("parseControl(%.40q) = %q, %v; want verb %q ok %v", c.line, verb, err, c.verb, c.ok)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("parseControl error is not shortened: %d bytes", len(err.Error()))
		}
	}
}

func TestControlSplitter(t *testing.T) {
	run := `run {"path":"/x","args":["x"],"grace_ns":1}` + "\n"
	type recv struct {
		data string
		fds  []int
	}
	cases := []struct {
		name    string
		recvs   []recv
		want    []string // verbs, in order
		wantFDs []int    // of the run message, if any
		wantErr bool
	}{
		{"stale term glued to a run", []recv{{"term\n" + run, []int{7, 8, 9}}}, []string{"term", "run"}, []int{7, 8, 9}, false},
		{"run split across receives", []recv{{run[:10], []int{3, 4, 5}}, {run[10:], nil}}, []string{"run"}, []int{3, 4, 5}, false},
		{"partial line waits", []recv{{"ki", nil}}, nil, nil, false},
		{"requests during a run", []recv{{"term\nkill\n", nil}}, []string{"term", "kill"}, nil, false},
		{"run without descriptors", []recv{{run, nil}}, nil, nil, true},
		{"run with too many", []recv{{run, []int{1, 2, 3, 4}}}, nil, nil, true},
		{"garbage", []recv{{"oops\n", nil}}, nil, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s controlSplitter
			var verbs []string
			var fds []int
			var gotErr error
			for _, r := range c.recvs {
				s.add([]byte(r.data), r.fds)
				for gotErr == nil {
					msg, ok, err := s.next()
					if err != nil {
						gotErr = err
						break
					}
					if !ok {
						break
					}
					verbs = append(verbs, msg.Verb)
					if msg.Verb == ctrlRun {
						fds = msg.FDs
					}
				}
			}
			if (gotErr != nil) != c.wantErr {
				t.Fatalf("error = %v, want error %v", gotErr, c.wantErr)
			}
			if !c.wantErr && (!slices.Equal(verbs, c.want) || !slices.Equal(fds, c.wantFDs)) {
				t.Errorf("got verbs %v fds %v, want %v %v", verbs, fds, c.want, c.wantFDs)
			}
		})
	}
	var s controlSplitter
	s.add(make([]byte, maxControlLine+1), nil)
	if _, _, err := s.next(); err == nil {
		t.Error("an endless line was accepted")
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
