package winjob

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestIsBatchFile(t *testing.T) {
	cases := []struct {
		path string
		want bool
	}{
		{`C:\tools\build.bat`, true},
		{`C:\tools\BUILD.CMD`, true},
		{`C:\tools\build.Bat`, true},
		{`C:\tools\build.bat.`, true},
		{`C:\tools\build.bat  `, true},
		{`C:\tools\build.bat. .`, true},
		{`/c/tools/run.cmd`, true},
		{`C:\tools\build.exe`, false},
		{`C:\tools.bat\build.exe`, false},
		{`C:\tools\build`, false},
		{`C:\tools\batch`, false},
		{`C:\tools\x.bat.exe`, false},
		{`C:\tools\x.batx`, false},
		{``, false},
	}
	for _, c := range cases {
		if got := IsBatchFile(c.path); got != c.want {
			t.Errorf("IsBatchFile(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestCheckBatchArgs(t *testing.T) {
	const bat = `C:\p\run.bat`
	cases := []struct {
		name  string
		path  string
		args  []string
		index int // -1: accepted
		char  rune
	}{
		{"plain", bat, []string{"run.bat", "build", "--release", `C:\out dir\x.txt`, "a\tb", ""}, -1, 0},
		{"not a batch file", `C:\p\run.exe`, []string{"run.exe", "a&b", `"`, "%PATH%"}, -1, 0},
		{"ampersand", bat, []string{"run.bat", "ok", "a&calc"}, 2, '&'},
		{"pipe", bat, []string{"run.bat", "a|b"}, 1, '|'},
		{"less", bat, []string{"run.bat", "<in"}, 1, '<'},
		{"greater", bat, []string{"run.bat", ">out"}, 1, '>'},
		{"caret", bat, []string{"run.bat", "a^"}, 1, '^'},
		{"percent", bat, []string{"run.bat", "%PATH%"}, 1, '%'},
		{"bang", bat, []string{"run.bat", "!x!"}, 1, '!'},
		{"quote", bat, []string{"run.bat", `"&calc.exe`}, 1, '"'},
		{"open paren", bat, []string{"run.bat", "(x"}, 1, '('},
		{"close paren", bat, []string{"run.bat", "x)"}, 1, ')'},
		{"comma", bat, []string{"run.bat", "a,b"}, 1, ','},
		{"semicolon", bat, []string{"run.bat", "a;b"}, 1, ';'},
		{"equals", bat, []string{"run.bat", "--k=v"}, 1, '='},
		{"newline", bat, []string{"run.bat", "a\nb"}, 1, '\n'},
		{"carriage return", bat, []string{"run.bat", "a\rb"}, 1, '\r'},
		{"NUL", bat, []string{"run.bat", "a\x00b"}, 1, 0},
		{"escape char", bat, []string{"run.bat", "a\x1bb"}, 1, 0x1b},
		{"DEL", bat, []string{"run.bat", "a\x7f"}, 1, 0x7f},
		{"argv0 never reaches cmd.exe", `C:\p\RUN.CMD`, []string{"run&x.cmd", "ok"}, -1, 0},
		{"path in Program Files (x86)", `C:\Program Files (x86)\Yarn\bin\yarn.cmd`, []string{"yarn", "install"}, -1, 0},
		{"path with & ; = ,", `C:\a&b;c=d,e\run.bat`, []string{"run"}, -1, 0},
		{"path with percent", `C:\p\%PATH%\run.bat`, []string{"run", "ok"}, 0, '%'},
		{"path with bang", `C:\p!x!\run.bat`, []string{"run"}, 0, '!'},
		{"path with newline", "C:\\p\nq\\run.bat", []string{"run"}, 0, '\n'},
		{"first of several", bat, []string{"run.bat", "fine", "%a%", "b&c"}, 2, '%'},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckBatchArgs(c.path, c.args)
			if c.index < 0 {
				if err != nil {
					t.Fatalf("CheckBatchArgs(%q, %q) = %v, want nil", c.path, c.args, err)
				}
				return
			}
			var be *BatchArgError
			if !errors.As(err, &be) {
				t.Fatalf("CheckBatchArgs(%q, %q) = %v, want a *BatchArgError", c.path, c.args, err)
			}
			wantArg, wantWords := c.path, []string{"the batch file's path", "cmd.exe", "move or rename"}
			if c.index > 0 {
				wantArg, wantWords = c.args[c.index], []string{"argument " + strconv.Itoa(c.index), "cmd.exe", c.path}
			}
			if be.Index != c.index || be.Char != c.char || be.Arg != wantArg || be.Path != c.path {
				t.Errorf("got %+v, want index %d char %q", be, c.index, c.char)
			}
			msg := err.Error()
			for _, want := range wantWords {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not contain %q", msg, want)
				}
			}
			if strings.ContainsAny(msg, "\x00\r\n\x1b") {
				t.Errorf("message %q carries a raw control character", msg)
			}
		})
	}
}

func TestBatchCommandLine(t *testing.T) {
	// A stand-in for syscall.EscapeArg (Windows-only) with its rule for
	// spaces; the real one is used in TestBatchFileRunsAsApproved.
	quote := func(s string) string {
		if s == "" || strings.ContainsAny(s, " \t") {
			return `"` + s + `"`
		}
		return s
	}
	cases := []struct {
		path string
		args []string
		want string
	}{
		{`C:\p\tools\build.bat`, []string{"build", "x", "two words", ""}, `"C:\p\tools\build.bat" x "two words" ""`},
		{`C:\Program Files (x86)\y.cmd`, []string{"y"}, `"C:\Program Files (x86)\y.cmd"`},
		{`C:\p\run.bat`, nil, `"C:\p\run.bat"`},
	}
	for _, c := range cases {
		if got := BatchCommandLine(c.path, c.args, quote); got != c.want {
			t.Errorf("BatchCommandLine(%q, %q) = %s, want %s", c.path, c.args, got, c.want)
		}
	}
}
