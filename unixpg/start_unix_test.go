//go:build unix

package unixpg_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agentgate/agentgate/unixpg"

	"github.com/agentgate/agentgate/exec/procspec"
)

// run starts spec with stdout and stderr on pipes, waits, and returns the
// status and both outputs.
func run(t *testing.T, spec procspec.Spec) (procspec.ExitStatus, string, string) {
	t.Helper()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	spec.Stdout, spec.Stderr = outW, errW
	p, err := unixpg.Start(spec)
	outW.Close()
	errW.Close()
	if err != nil {
		t.Fatal(err)
	}
	var stderr []byte
	var wg sync.WaitGroup
	wg.Go(func() { stderr, _ = io.ReadAll(errR) })
	stdout, _ := io.ReadAll(outR)
	wg.Wait()
	st, err := p.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return st, string(stdout), string(stderr)
}

func TestStartUsesSpecExactly(t *testing.T) { bothModes(t, testStartUsesSpecExactly) }

func testStartUsesSpecExactly(t *testing.T) {
	dir := t.TempDir()
	st, out, errOut := run(t, procspec.Spec{
		Path: "/bin/sh",
		Args: []string{"sh", "-c", `echo "$FOO"; pwd; env | sort; echo oops >&2; exit 3`},
		Dir:  dir,
		Env:  []string{"FOO=bar baz"},
	})
	if !st.Exited || st.Code != 3 || st.Signal != "" {
		t.Errorf("status = %+v, want exit status 3", st)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || lines[0] != "bar baz" || lines[1] != dir {
		t.Errorf("stdout = %q, want FOO's value and the working directory %s", out, dir)
	}
	if strings.Contains(out, "AGENTGATE_SUPERVISE") {
		t.Errorf("the supervisor's marker leaked into the target's environment: %q", out)
	}
	if errOut != "oops\n" {
		t.Errorf("stderr = %q, want %q", errOut, "oops\n")
	}
}

func TestStartStdinAndNilFiles(t *testing.T) { bothModes(t, testStartStdinAndNilFiles) }

func testStartStdinAndNilFiles(t *testing.T) {
	in, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.WriteString("hello\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	st, out, _ := run(t, procspec.Spec{Path: "/bin/cat", Args: []string{"cat"}, Stdin: in})
	if out != "hello\n" || !st.Exited || st.Code != 0 {
		t.Errorf("cat with a stdin file: status %+v, stdout %q", st, out)
	}
	// nil everywhere: /dev/null, so cat ends at once.
	p, err := unixpg.Start(procspec.Spec{Path: "/bin/cat", Args: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := p.Wait(); err != nil || !st.Exited || st.Code != 0 {
		t.Errorf("cat with nil files: %+v, %v", st, err)
	}
}

func TestStartReportsSignalDeath(t *testing.T) { bothModes(t, testStartReportsSignalDeath) }

func testStartReportsSignalDeath(t *testing.T) {
	st, _, _ := run(t, procspec.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "kill -USR1 $$"}})
	if st.Exited || st.Signal != "SIGUSR1" || st.Code != -1 {
		t.Errorf("status = %+v, want killed by SIGUSR1", st)
	}
	if st.String() != "signal: SIGUSR1" {
		t.Errorf("String() = %q", st.String())
	}
}

func TestStartFailures(t *testing.T) { bothModes(t, testStartFailures) }

func testStartFailures(t *testing.T) {
	dir := t.TempDir()
	notExec := dir + "/script"
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		spec procspec.Spec
		is   error
	}{
		{"missing", procspec.Spec{Path: dir + "/nope", Args: []string{"nope"}}, fs.ErrNotExist},
		{"not executable", procspec.Spec{Path: notExec, Args: []string{"script"}}, fs.ErrPermission},
		{"missing dir", procspec.Spec{Path: "/bin/true", Args: []string{"true"}, Dir: dir + "/gone"}, fs.ErrNotExist},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := unixpg.Start(c.spec)
			if err == nil {
				p.Kill()
				_, _ = p.Wait()
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, c.is) || errors.Is(err, procspec.ErrContainment) {
				t.Errorf("Start error = %v; want one wrapping %v and not ErrContainment", err, c.is)
			}
			if !strings.Contains(err.Error(), c.spec.Path) {
				t.Errorf("Start error %q does not name %s", err, c.spec.Path)
			}
		})
	}
	for _, spec := range []procspec.Spec{
		{Path: "true", Args: []string{"true"}},
		{Path: "/bin/true"},
	} {
		if p, err := unixpg.Start(spec); err == nil {
			_, _ = p.Wait()
			t.Errorf("Start(%+v) succeeded, want a refusal", spec)
		}
	}
}

func TestWaitFromManyGoroutines(t *testing.T) { bothModes(t, testWaitFromManyGoroutines) }

func testWaitFromManyGoroutines(t *testing.T) {
	p, err := unixpg.Start(procspec.Spec{Path: "/bin/sh", Args: []string{"sh", "-c", "exit 7"}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([]procspec.ExitStatus, 8)
	for i := range results {
		wg.Go(func() {
			st, err := p.Wait()
			if err != nil {
				t.Errorf("Wait: %v", err)
			}
			results[i] = st
		})
	}
	wg.Wait()
	<-p.Done()
	for i, st := range results {
		if st != (procspec.ExitStatus{Code: 7, Exited: true}) {
			t.Errorf("Wait #%d = %+v, want exit status 7", i, st)
		}
	}
}

func TestContainmentErrorTellsNotToRetry(t *testing.T) {
	bothModes(t, testContainmentErrorTellsNotToRetry)
}

func testContainmentErrorTellsNotToRetry(t *testing.T) {
	msg := procspec.ErrContainment.Error()
	for _, want := range []string{"do not retry", "fix"} {
		if !strings.Contains(msg, want) {
			t.Errorf("procspec.ErrContainment %q does not contain %q", msg, want)
		}
	}
}
