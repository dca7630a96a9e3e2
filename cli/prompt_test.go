package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/exec/runinfo"
)

// TestPromptIgnoresTypedAhead: a line typed before the question was shown —
// by a person, or by a program writing into the terminal ahead of the
// prompt — never answers it; only a line typed after it does.
func TestPromptIgnoresTypedAhead(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	var out bytes.Buffer
	sw := &syncWriter{w: &out}
	a := newTerminalApprover(r, sw, nil, nil)
	// Typed ahead: read by the approver's reader before any question.
	if _, err := io.WriteString(w, "o\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)

	req := &agentbridge.ApprovalRequest{ID: "r1", Command: exec.Command{Argv: []string{"rm", "-rf", "x"},
		Executable: "/usr/bin/rm", Dir: "/p", DirRel: ".", ProjectRoot: "/p", Timeout: time.Minute}}
	done := make(chan agentbridge.Answer, 1)
	go func() {
		ans, err := a.Ask(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		done <- ans
	}()
	select {
	case ans := <-done:
		t.Fatalf("the typed-ahead line answered the question: %+v", ans)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := io.WriteString(w, "d\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-done:
		if ans.Approved {
			t.Fatalf("approved; want the answer typed after the question (deny): %+v", ans)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after a line typed after the question")
	}
	if !strings.Contains(sw.String(), "Run it?") {
		t.Errorf("no question shown: %q", sw.String())
	}
}

// TestPromptTakesAnAnswerTypedAtOnce: a line typed the moment the question
// appears — here, while the question is still being written, and stamped
// by the approver's reader before the write returns — answers it. (Taking
// the moment after writing the question dropped such an answer as
// type-ahead and left the prompt waiting.)
func TestPromptTakesAnAnswerTypedAtOnce(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	var out bytes.Buffer
	a := newTerminalApprover(r, &answeringWriter{out: &syncWriter{w: &out}, prompt: "Run it?", answer: w}, nil, nil)
	req := &agentbridge.ApprovalRequest{ID: "r1", Command: exec.Command{Argv: []string{"rm", "-rf", "x"},
		Executable: "/usr/bin/rm", Dir: "/p", DirRel: ".", ProjectRoot: "/p", Timeout: time.Minute}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ans, err := a.Ask(ctx, req)
	if err != nil {
		t.Fatalf("the answer typed as the question appeared was dropped: %v", err)
	}
	if ans.Approved {
		t.Fatalf("approved; want the answer typed (deny): %+v", ans)
	}
}

// answeringWriter passes writes to out and, once a write holds prompt,
// types "d" into answer and waits until the approver's reader has surely
// read and stamped it, before the write returns.
type answeringWriter struct {
	out    io.Writer
	prompt string
	answer io.Writer
	typed  bool
}

func (a *answeringWriter) Write(p []byte) (int, error) {
	n, err := a.out.Write(p)
	if !a.typed && strings.Contains(string(p), a.prompt) {
		a.typed = true
		io.WriteString(a.answer, "d\n")
		time.Sleep(20 * time.Millisecond)
	}
	return n, err
}

// syncWriter serialises writes to w (the approver writes from Ask's
// goroutine while the test reads after it).
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// TestPromptShowsConfinement: the terminal prompt says what the run may
// write, where its program resolves to and what earlier runs changed among
// the files that steer agents and tools, and offers no way to lift the
// confinement (only the desktop card does, once).
func TestPromptShowsConfinement(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	var out bytes.Buffer
	sw := &syncWriter{w: &out}
	a := newTerminalApprover(r, sw, nil, nil)
	req := &agentbridge.ApprovalRequest{ID: "r1", Command: exec.Command{Argv: []string{"python3", "x.py"},
		Executable: "/usr/bin/python3", ExecutableResolved: "/usr/bin/python3.11", Dir: "/p", DirRel: ".", ProjectRoot: "/p", Timeout: time.Minute},
		Confinement:      runinfo.Confinement{Writes: []string{"project", "temp", "cache"}, Network: "none", NetworkBy: "namespace"},
		ProtectedChanged: []string{"npm test (run r0): changed .git/config"}}
	done := make(chan agentbridge.Answer, 1)
	go func() {
		ans, _ := a.Ask(context.Background(), req)
		done <- ans
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(sw.String(), "Run it?") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := io.WriteString(w, "d\n"); err != nil {
		t.Fatal(err)
	}
	if ans := <-done; ans.Approved || ans.WithoutWriteConfinement {
		t.Fatalf("answer %+v", ans)
	}
	text := sw.String()
	for _, want := range []string{"confined:   writes: project, temp, cache; network: none", "program:    /usr/bin/python3 → /usr/bin/python3.11",
		"  ! earlier runs in this project changed files that steer agents and tools; look at them before you answer:\n      npm test (run r0): changed .git/config\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt lacks %q:\n%s", want, text)
		}
	}
}
