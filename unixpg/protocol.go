package unixpg

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The supervisor protocol. The host starts the supervisor with two extra
// pipes: the control pipe (host → supervisor, the supervisor's fd 3) and the
// status pipe (supervisor → host, fd 4). Both carry newline-terminated lines.
//
// Control: the first line is the JSON wireSpec; after it, "term" asks for
// SIGTERM → grace → SIGKILL → sweep and "kill" for SIGKILL → sweep. End of
// file on the control pipe is the lifeline: the host is gone, kill at once.
//
// Status: exactly one of "started PID", "refused QUOTED" (containment could
// not be set up) or "execfail ERRNO QUOTED" (the target could not be
// executed) comes first; after "started" exactly one of "exited CODE" or
// "signaled SIGNUM" follows once the tree is gone.

// Control requests, one per line.
const (
	ctrlTerm = "term"
	ctrlKill = "kill"
)

// Status line verbs.
const (
	statusStarted  = "started"
	statusRefused  = "refused"
	statusExecFail = "execfail"
	statusExited   = "exited"
	statusSignaled = "signaled"
)

// wireSpec is the part of a Spec the supervisor needs, sent as the first
// control line. Files travel as inherited descriptors, not here.
type wireSpec struct {
	// Path is Spec.Path.
	Path string `json:"path"`
	// Args is Spec.Args.
	Args []string `json:"args"`
	// Dir is Spec.Dir.
	Dir string `json:"dir,omitempty"`
	// Env is Spec.Env.
	Env []string `json:"env"`
	// GraceNS is the effective grace in nanoseconds (never zero).
	GraceNS int64 `json:"grace_ns"`
}

// encodeWireSpec returns the first control line for spec, newline included,
// with the grace defaulted as Spec.Grace documents.
func encodeWireSpec(spec Spec) ([]byte, error) {
	grace := spec.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	b, err := json.Marshal(wireSpec{Path: spec.Path, Args: spec.Args, Dir: spec.Dir, Env: spec.Env, GraceNS: int64(grace)})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// decodeWireSpec parses a first control line (with or without its newline)
// and checks that it can be run: a non-empty path and argv and a positive
// grace.
func decodeWireSpec(line []byte) (wireSpec, error) {
	var ws wireSpec
	if err := json.Unmarshal(line, &ws); err != nil {
		return ws, fmt.Errorf("malformed run description from the host: %v", err)
	}
	if ws.Path == "" || len(ws.Args) == 0 || ws.GraceNS <= 0 {
		return ws, fmt.Errorf("incomplete run description from the host (path %q, %d args, grace %v)",
			ws.Path, len(ws.Args), time.Duration(ws.GraceNS))
	}
	return ws, nil
}

// statusMsg is one parsed status line.
type statusMsg struct {
	// Verb is one of the status* constants.
	Verb string
	// Num is the pid (started), errno (execfail), exit code (exited) or
	// signal number (signaled); zero for refused.
	Num int
	// Text is the message of refused and execfail, unquoted.
	Text string
}

// formatStatus returns msg as one status line, newline included. Text is
// written with strconv.Quote so that it can hold any byte, newlines included.
func formatStatus(msg statusMsg) string {
	switch msg.Verb {
	case statusRefused:
		return msg.Verb + " " + strconv.Quote(msg.Text) + "\n"
	case statusExecFail:
		return msg.Verb + " " + strconv.Itoa(msg.Num) + " " + strconv.Quote(msg.Text) + "\n"
	default:
		return msg.Verb + " " + strconv.Itoa(msg.Num) + "\n"
	}
}

// parseStatus parses one status line as formatStatus writes it (the trailing
// newline is optional). Anything else is an error naming the line.
func parseStatus(line string) (statusMsg, error) {
	line = strings.TrimSuffix(line, "\n")
	verb, rest, _ := strings.Cut(line, " ")
	bad := func() (statusMsg, error) {
		return statusMsg{}, fmt.Errorf("unexpected status line from supervisor: %q", line)
	}
	switch verb {
	case statusStarted, statusExited, statusSignaled:
		n, err := strconv.Atoi(rest)
		if err != nil || (verb != statusExited && n <= 0) {
			return bad()
		}
		return statusMsg{Verb: verb, Num: n}, nil
	case statusRefused:
		text, err := strconv.Unquote(rest)
		if err != nil {
			return bad()
		}
		return statusMsg{Verb: verb, Text: text}, nil
	case statusExecFail:
		num, quoted, ok := strings.Cut(rest, " ")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 0 {
			return bad()
		}
		text, err := strconv.Unquote(quoted)
		if err != nil {
			return bad()
		}
		return statusMsg{Verb: verb, Num: n, Text: text}, nil
	}
	return bad()
}
