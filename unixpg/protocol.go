package unixpg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentgate/agentgate/exec/procspec"
)

// The supervisor protocol. The host and a supervisor share one connected
// Unix stream socket (a socketpair; the supervisor's end is its fd 3, the
// host's end is close-on-exec). Both directions carry newline-terminated
// lines. A supervisor serves any number of runs, one at a time.
//
// Host → supervisor (control): "run JSON" (a wireSpec) starts a run; it is
// sent only to an idle supervisor and carries the target's stdin, stdout
// and stderr, then the descriptors wireSpec.Extra names, as SCM_RIGHTS
// ancillary data on its first byte. During a run, "term" asks for SIGTERM → grace → SIGKILL
// → sweep and "kill" for SIGKILL → sweep; an idle supervisor ignores both
// (they were meant for a run that already ended). "ping" asks for a "pong"
// at any time: the host's proof that the supervisor still serves. End of
// file is the lifeline: the host is gone or retired the supervisor; a
// running tree is SIGKILLed and swept at once, then the supervisor exits.
// Any other line is a protocol error, which the supervisor treats like end
// of file.
//
// Supervisor → host (status): for each run, exactly one of "started PID",
// "refused QUOTED" (containment could not be set up; the supervisor then
// exits), "execfail ERRNO QUOTED" (the target could not be executed; the
// supervisor is idle again), "changed QUOTED" (the program is no longer
// the file the host checked, wireSpec.ProgramID; nothing started, the
// supervisor is idle again) or "confinefail QUOTED" (the run's sandbox
// could not be set up; nothing started, the supervisor is idle again)
// comes first; after "started" exactly one
// "end JSON" (an endReport) follows once nothing of the tree is left: how
// the leader ended, whether the run's deadline ended the tree, and whether
// the supervisor's check of itself after the run found anything off (then
// it exits instead of becoming idle). "pong" answers a ping at any time.
// An idle supervisor sends nothing else.

// Control requests, one per line.
const (
	ctrlRun  = "run"
	ctrlTerm = "term"
	ctrlKill = "kill"
	ctrlPing = "ping"
)

// runFDs is the number of descriptors every run line carries: stdin,
// stdout and stderr, in that order; wireSpec.Extra's follow.
const runFDs = 3

// Names of the descriptors wireSpec.Extra lists.
const (
	// extraDir is the run's working directory handle (Spec.DirFD).
	extraDir = "dir"
	// extraShim is the confinement shim executable (Sandbox.Shim).
	extraShim = "shim"
	// extraRuleset is the Landlock ruleset (Sandbox.Ruleset).
	extraRuleset = "ruleset"
	// extraCgroup is the run's own cgroup directory (cgroup_linux.go): the
	// target is started into it.
	extraCgroup = "cgroup"
)

// knownExtras are the names wireSpec.Extra may hold.
var knownExtras = []string{extraDir, extraShim, extraRuleset, extraCgroup}

// Status line verbs.
const (
	statusStarted  = "started"
	statusRefused  = "refused"
	statusExecFail = "execfail"
	statusChanged  = "changed"
	statusConfine  = "confinefail"
	statusEnd      = "end"
	statusPong     = "pong"
)

// wireSpec is the part of a Spec the supervisor needs, sent in a run line.
// Files travel as SCM_RIGHTS descriptors with it, not in the JSON.
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
	// TimeoutNS is Spec.Timeout in nanoseconds: the supervisor ends the
	// tree (as on "term") once it has passed since the target started;
	// zero means no deadline.
	TimeoutNS int64 `json:"timeout_ns,omitempty"`
	// Extra names the descriptors that follow stdin, stdout and stderr,
	// in order (knownExtras, each at most once).
	Extra []string `json:"extra,omitempty"`
	// ProgramID is Spec.ProgramID: the supervisor checks the file at Path
	// against it right before it executes it.
	ProgramID *procspec.FileID `json:"program_id,omitempty"`
	// Sandbox is Spec.Sandbox without its files (which are Extra "shim"
	// and "ruleset"); nil for none.
	Sandbox *wireSandbox `json:"sandbox,omitempty"`
	// Cgroup is the path of the run's cgroup (Extra "cgroup"), which the
	// supervisor removes if it has to end the tree without the host (its
	// lifeline lost); "" for none.
	Cgroup string `json:"cgroup,omitempty"`
}

// wireSandbox is the part of a procspec.Sandbox that is not a file.
type wireSandbox struct {
	// RulesetFlags is Sandbox.RulesetFlags.
	RulesetFlags uint32 `json:"ruleset_flags,omitempty"`
	// UserNS, MountNS and NetNS are the Sandbox's namespaces.
	UserNS  bool `json:"userns,omitempty"`
	MountNS bool `json:"mountns,omitempty"`
	NetNS   bool `json:"netns,omitempty"`
	// ReadOnly and Hide are the Sandbox's mounts.
	ReadOnly []string `json:"read_only,omitempty"`
	Hide     []string `json:"hide,omitempty"`
}

// extraFiles returns the names and the files of the extra descriptors of
// spec and of the run's cgroup directory (nil for none), in the order a run
// line carries them.
func extraFiles(spec procspec.Spec, cgroup *os.File) (names []string, files []*os.File) {
	if cgroup != nil {
		names, files = append(names, extraCgroup), append(files, cgroup)
	}
	if spec.DirFD != nil {
		names, files = append(names, extraDir), append(files, spec.DirFD)
	}
	if sb := spec.Sandbox; sb != nil {
		names, files = append(names, extraShim), append(files, sb.Shim)
		if sb.Ruleset != nil {
			names, files = append(names, extraRuleset), append(files, sb.Ruleset)
		}
	}
	return names, files
}

// encodeRunLine returns the run control line for spec ("run JSON\n"), with
// the grace defaulted as Spec.Grace documents and cgroup (the run's cgroup
// directory, or nil) among the extra descriptors.
func encodeRunLine(spec procspec.Spec, cgroup *os.File) ([]byte, error) {
	cgroupPath := ""
	if cgroup != nil {
		cgroupPath = cgroup.Name()
	}
	grace := effectiveGrace(spec.Grace)
	extra, _ := extraFiles(spec, cgroup)
	ws := wireSpec{Path: spec.Path, Args: spec.Args, Dir: spec.Dir, Env: spec.Env,
		GraceNS: int64(grace), TimeoutNS: int64(max(spec.Timeout, 0)), Extra: extra, ProgramID: spec.ProgramID,
		Cgroup: cgroupPath}
	if sb := spec.Sandbox; sb != nil {
		w := wireSandboxOf(sb)
		ws.Sandbox = &w
	}
	b, err := json.Marshal(ws)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(ctrlRun+" "), b...), '\n'), nil
}

// wireSandboxOf returns the part of sb that is not a file.
func wireSandboxOf(sb *procspec.Sandbox) wireSandbox {
	return wireSandbox{RulesetFlags: sb.RulesetFlags, UserNS: sb.UserNS, MountNS: sb.MountNS, NetNS: sb.NetNS,
		ReadOnly: sb.ReadOnly, Hide: sb.Hide}
}

// effectiveGrace is the grace Spec.Grace documents: g, or DefaultGrace when
// g is zero or negative.
func effectiveGrace(g time.Duration) time.Duration {
	if g <= 0 {
		return procspec.DefaultGrace
	}
	return g
}

// parseControl parses one control line (with or without its newline): the
// verb, and for a run line the run's description, checked as
// decodeWireSpec checks it. Anything else is an error naming the line.
func parseControl(line []byte) (verb string, ws wireSpec, err error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	switch {
	case string(line) == ctrlTerm || string(line) == ctrlKill || string(line) == ctrlPing:
		return string(line), ws, nil
	case bytes.HasPrefix(line, []byte(ctrlRun+" ")):
		ws, err = decodeWireSpec(line[len(ctrlRun)+1:])
		return ctrlRun, ws, err
	}
	const show = 80
	if len(line) > show {
		line = append(line[:show:show], "…"...)
	}
	return "", ws, fmt.Errorf("unexpected control line from the host: %q", line)
}

// decodeWireSpec parses a run's JSON description and checks that it can be
// run: a non-empty path and argv and a positive grace.
func decodeWireSpec(line []byte) (wireSpec, error) {
	var ws wireSpec
	if err := json.Unmarshal(line, &ws); err != nil {
		return ws, fmt.Errorf("malformed run description from the host: %v", err)
	}
	if ws.Path == "" || len(ws.Args) == 0 || ws.GraceNS <= 0 || ws.TimeoutNS < 0 {
		return ws, fmt.Errorf("incomplete run description from the host (path %q, %d args, grace %v)",
			ws.Path, len(ws.Args), time.Duration(ws.GraceNS))
	}
	for i, name := range ws.Extra {
		if !slices.Contains(knownExtras, name) || slices.Contains(ws.Extra[:i], name) {
			return ws, fmt.Errorf("run description from the host names an unknown or repeated descriptor %q", name)
		}
	}
	if ws.Cgroup != "" && (!strings.HasPrefix(ws.Cgroup, "/") || !slices.Contains(ws.Extra, extraCgroup)) {
		return ws, fmt.Errorf("run description from the host has a cgroup path without its descriptor, or not absolute: %q", ws.Cgroup)
	}
	if (ws.Sandbox != nil) != slices.Contains(ws.Extra, extraShim) {
		return ws, fmt.Errorf("run description from the host has a sandbox without its shim, or a shim without a sandbox")
	}
	if ws.Sandbox != nil {
		for _, p := range append(slices.Clone(ws.Sandbox.ReadOnly), ws.Sandbox.Hide...) {
			if !strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 {
				return ws, fmt.Errorf("run description from the host has a sandbox path that is not absolute: %q", p)
			}
		}
	}
	return ws, nil
}

// statusMsg is one parsed status line.
type statusMsg struct {
	// Verb is one of the status* constants.
	Verb string
	// Num is the pid (started) or errno (execfail); zero otherwise.
	Num int
	// Text is the message of refused and execfail, unquoted.
	Text string
	// End is the report of an end line.
	End endReport
}

// endReport is the JSON of an end line: how a run's tree ended.
type endReport struct {
	// Exited is true when the leader called exit; Code is then its code.
	Exited bool `json:"exited"`
	// Code is the leader's exit code (Exited only).
	Code int `json:"code"`
	// Signal is the number of the signal that killed the leader (not
	// Exited only).
	Signal int `json:"signal,omitempty"`
	// Deadline is true when the supervisor ended the tree because the
	// run's timeout passed (before any term or kill asked it to).
	Deadline bool `json:"deadline,omitempty"`
	// Off says what the supervisor's check of itself after the run found
	// wrong (e.g. it is being traced, or is no longer a subreaper); the
	// supervisor exits after the report and must not be reused. Empty when
	// all is well.
	Off string `json:"off,omitempty"`
}

// formatStatus returns msg as one status line, newline included. Text is
// written with strconv.Quote so that it can hold any byte, newlines included.
func formatStatus(msg statusMsg) string {
	switch msg.Verb {
	case statusRefused, statusChanged, statusConfine:
		return msg.Verb + " " + strconv.Quote(msg.Text) + "\n"
	case statusExecFail:
		return msg.Verb + " " + strconv.Itoa(msg.Num) + " " + strconv.Quote(msg.Text) + "\n"
	case statusEnd:
		b, _ := json.Marshal(msg.End) // cannot fail: plain fields
		return msg.Verb + " " + string(b) + "\n"
	case statusPong:
		return msg.Verb + "\n"
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
	case statusStarted:
		n, err := strconv.Atoi(rest)
		if err != nil || n <= 0 {
			return bad()
		}
		return statusMsg{Verb: verb, Num: n}, nil
	case statusRefused, statusChanged, statusConfine:
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
	case statusEnd:
		var end endReport
		dec := json.NewDecoder(strings.NewReader(rest))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&end); err != nil || dec.More() {
			return bad()
		}
		if end.Exited && (end.Signal != 0 || end.Code < 0 || end.Code > 255) || !end.Exited && (end.Signal <= 0 || end.Code != 0) {
			return bad()
		}
		return statusMsg{Verb: verb, End: end}, nil
	case statusPong:
		if line != statusPong {
			return bad()
		}
		return statusMsg{Verb: verb}, nil
	}
	return bad()
}

// maxControlLine bounds one control line (a run's argv and environment),
// so that a misbehaving peer cannot make the supervisor buffer without end.
const maxControlLine = 16 << 20

// controlMsg is one control request as the supervisor received it.
type controlMsg struct {
	// Verb is ctrlRun, ctrlTerm or ctrlKill.
	Verb string
	// Spec is the run's description (run only).
	Spec wireSpec
	// FDs are the run's stdin, stdout and stderr as received (run only);
	// the receiver owns and must close them.
	FDs []int
}

// controlSplitter turns the bytes and descriptors received on the control
// socket into control messages. On a stream socket the kernel delivers the
// descriptors of a sendmsg with the first byte of its data, but may return
// earlier bytes in the same receive; descriptors therefore wait in a queue
// until the run line they came with is complete.
type controlSplitter struct {
	// buf holds received bytes not yet consumed as complete lines.
	buf []byte
	// fds holds received descriptors not yet claimed by a run line.
	fds []int
}

// add appends bytes and descriptors from one receive.
func (c *controlSplitter) add(data []byte, fds []int) {
	c.buf = append(c.buf, data...)
	c.fds = append(c.fds, fds...)
}

// next returns the next complete control message; ok is false when no
// complete line is buffered yet. A protocol error is returned for a line
// parseControl rejects, a run line that does not find exactly runFDs plus
// its Extra descriptors waiting, and a line longer than maxControlLine. After an
// error the caller should close takeFDs() and stop.
func (c *controlSplitter) next() (msg controlMsg, ok bool, err error) {
	i := bytes.IndexByte(c.buf, '\n')
	if i < 0 {
		if len(c.buf) > maxControlLine {
			return msg, false, fmt.Errorf("control line from the host longer than %d bytes", maxControlLine)
		}
		return msg, false, nil
	}
	line := c.buf[:i]
	c.buf = c.buf[i+1:]
	verb, ws, err := parseControl(line)
	if err != nil {
		return msg, false, err
	}
	msg = controlMsg{Verb: verb, Spec: ws}
	if verb == ctrlRun {
		if want := runFDs + len(ws.Extra); len(c.fds) != want {
			return msg, false, fmt.Errorf("run line from the host came with %d descriptors, want %d", len(c.fds), want)
		}
		msg.FDs = c.takeFDs()
	}
	return msg, true, nil
}

// takeFDs returns and forgets every queued descriptor.
func (c *controlSplitter) takeFDs() []int {
	fds := c.fds
	c.fds = nil
	return fds
}
