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
