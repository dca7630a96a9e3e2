package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/tidwall/gjson"

	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/exec/shellword"
	"github.com/agentgate/agentgate/prefs/agents"
)

// setupCase prepares a home and project holding a copy of a sample settings
// file and returns the env and the file's path.
type setupCase struct {
	agent, sample, rel string // rel: path under home
	args               []string
	check              func(t *testing.T, data []byte, exe string)
}

var setupCases = []setupCase{
	{
		agent: "claude-code", sample: "claude-settings.json", rel: ".claude/settings.json",
		check: func(t *testing.T, data []byte, exe string) {
			g := gjson.ParseBytes(data)
			if got := g.Get("hooks.PreToolUse.0.matcher").String(); got != "Bash" {
				t.Errorf("matcher %q", got)
			}
			if got := g.Get("hooks.PreToolUse.0.hooks.0.command").String(); got != exe+" hook claude-code" {
				t.Errorf("command %q", got)
			}
			if got := g.Get("hooks.PreToolUse.0.hooks.0.timeout").Int(); got != 600 {
				t.Errorf("timeout %d", got)
			}
		},
	},
	{
		agent: "gemini", sample: "gemini-settings.json", rel: ".gemini/settings.json",
		check: func(t *testing.T, data []byte, exe string) {
			g := gjson.ParseBytes(data)
			if got := g.Get("hooks.BeforeTool.1.matcher").String(); got != "run_shell_command" {
				t.Errorf("matcher %q", got)
			}
			if got := g.Get("hooks.BeforeTool.1.hooks.0.command").String(); got != exe+" hook gemini" {
				t.Errorf("command %q", got)
			}
			if got := g.Get("hooks.BeforeTool.1.hooks.0.timeout").Int(); got != 600000 {
				t.Errorf("timeout %d", got)
			}
		},
	},
	{
		agent: "codex", sample: "codex-config.toml", rel: ".codex/config.toml",
		check: func(t *testing.T, data []byte, exe string) {
			var cfg struct {
				Model string `toml:"model"`
				Hooks struct {
					PreToolUse []struct {
						Matcher string `toml:"matcher"`
						Hooks   []struct {
							Type    string `toml:"type"`
							Command string `toml:"command"`
							Timeout int    `toml:"timeout"`
						} `toml:"hooks"`
					} `toml:"PreToolUse"`
				} `toml:"hooks"`
				MCP map[string]any `toml:"mcp_servers"`
			}
			if _, err := toml.Decode(string(data), &cfg); err != nil {
				t.Fatalf("config.toml no longer parses: %v\n%s", err, data)
			}
			if cfg.Model != "gpt-5-codex" || cfg.MCP["docs"] == nil {
				t.Errorf("unrelated settings lost: %+v", cfg)
			}
			if len(cfg.Hooks.PreToolUse) != 1 || cfg.Hooks.PreToolUse[0].Matcher != "Bash" ||
				len(cfg.Hooks.PreToolUse[0].Hooks) != 1 || cfg.Hooks.PreToolUse[0].Hooks[0].Command != exe+" hook codex" ||
				cfg.Hooks.PreToolUse[0].Hooks[0].Type != "command" {
				t.Errorf("hook tables: %+v", cfg.Hooks)
			}
		},
	},
	{
		agent: "mcp-json", sample: "mcp.json", rel: "project/.mcp.json",
		check: func(t *testing.T, data []byte, exe string) {
			g := gjson.ParseBytes(data)
			if got := g.Get("mcpServers.agentgate.command").String(); got != exe {
				t.Errorf("command %q", got)
			}
			if args := g.Get("mcpServers.agentgate.args").Array(); len(args) != 1 || args[0].String() != "mcp" {
				t.Errorf("args %v", args)
			}
			if got := g.Get("mcpServers.github.command").String(); got != "docker" {
				t.Errorf("github server lost: %q", got)
			}
		},
	},
}

type setupHarness struct {
	env    setupEnv
	home   string
	stdout bytes.Buffer
	stderr bytes.Buffer
}

func newSetupHarness(t *testing.T, terminal bool, answer string) *setupHarness {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "project", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &setupHarness{home: home}
	h.env = setupEnv{
		stdin:      strings.NewReader(answer),
		stdout:     &h.stdout,
		stderr:     &h.stderr,
		isTerminal: func() bool { return terminal },
		executable: "/opt/agent gate/bin/agentgate",
		home:       home,
		cwd:        filepath.Join(home, "project"),
		now:        func() time.Time { return time.Date(2026, 11, 30, 9, 30, 0, 0, time.UTC) },
		stateDir:   filepath.Join(home, "state"),
		version:    testedVersion,
	}
	return h
}

// testedVersion stands in for asking an agent's program its version: the
// program sits in /usr/bin and is the newest tested version.
func testedVersion(_ context.Context, program string) (string, string, error) {
	for _, a := range agents.Known {
		if a.Program == program {
			return "/usr/bin/" + program, a.NewestTested(), nil
		}
	}
	return "", "", fmt.Errorf("%s is not installed", program)
}

func copySample(t *testing.T, sample, dst string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "setup", sample))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

func TestSetupWritesKeepsAndIsIdempotent(t *testing.T) {
	for _, tc := range setupCases {
		t.Run(tc.agent, func(t *testing.T) {
			h := newSetupHarness(t, true, "y\n")
			file := filepath.Join(h.home, tc.rel)
			old := copySample(t, tc.sample, file)
			if code := runSetup(append([]string{tc.agent}, tc.args...), h.env); code != 0 {
				t.Fatalf("exit %d, stderr %s", code, h.stderr.String())
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			quotedExe := `'/opt/agent gate/bin/agentgate'`
			exe := quotedExe
			if tc.agent == "mcp-json" {
				exe = "/opt/agent gate/bin/agentgate"
			}
			tc.check(t, data, exe)
			// The diff was shown and only adds lines: every old line is kept,
			// in order, byte for byte.
			out := h.stdout.String()
			if !strings.Contains(out, "--- "+file) || !strings.Contains(out, "+++ "+file) {
				t.Errorf("no diff shown:\n%s", out)
			}
			for _, op := range diffLines(splitLines(string(old)), splitLines(string(data))) {
				if op.kind == '-' {
					t.Errorf("line removed or changed: %q\nnew file:\n%s", op.text, data)
				}
			}
			backup := file + ".agentgate-backup-20261130-093000"
			if b, err := os.ReadFile(backup); err != nil || !bytes.Equal(b, old) {
				t.Errorf("backup %s: %v (equal to the old file: %v)", backup, err, bytes.Equal(b, old))
			}
			if tc.agent != "codex" && !gjson.ValidBytes(data) {
				t.Errorf("result is not valid JSON:\n%s", data)
			}

			// Second run: already set up, nothing written, no new backup.
			h2 := newSetupHarness(t, true, "y\n")
			h2.env.home, h2.env.cwd = h.home, h.env.cwd
			h2.env.now = func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }
			if code := runSetup(append([]string{tc.agent}, tc.args...), h2.env); code != 0 {
				t.Fatalf("second run: exit %d, stderr %s", code, h2.stderr.String())
			}
			if !strings.Contains(h2.stdout.String(), "already set up") {
				t.Errorf("second run said %q", h2.stdout.String())
			}
			again, _ := os.ReadFile(file)
			if !bytes.Equal(again, data) {
				t.Errorf("second run changed the file")
			}
			if _, err := os.Stat(file + ".agentgate-backup-20261201-000000"); err == nil {
				t.Errorf("second run made a backup")
			}
		})
	}
}

func TestSetupWithoutTerminalChangesNothing(t *testing.T) {
	for _, tc := range setupCases {
		t.Run(tc.agent, func(t *testing.T) {
			h := newSetupHarness(t, false, "y\n")
			file := filepath.Join(h.home, tc.rel)
			old := copySample(t, tc.sample, file)
			if code := runSetup([]string{tc.agent}, h.env); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			if now, _ := os.ReadFile(file); !bytes.Equal(now, old) {
				t.Errorf("file changed without a terminal")
			}
			if !strings.Contains(h.stdout.String(), "+++ ") || !strings.Contains(h.stderr.String(), "needs a terminal") {
				t.Errorf("stdout %q stderr %q: want the diff and the reason", h.stdout.String(), h.stderr.String())
			}
			matches, _ := filepath.Glob(file + ".agentgate-backup-*")
			if len(matches) != 0 {
				t.Errorf("backups made: %v", matches)
			}
		})
	}
}

func TestSetupDeclined(t *testing.T) {
	h := newSetupHarness(t, true, "\n")
	file := filepath.Join(h.home, ".claude", "settings.json")
	old := copySample(t, "claude-settings.json", file)
	if code := runSetup([]string{"claude-code"}, h.env); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, old) {
		t.Errorf("declined, but the file changed")
	}
}

func TestSetupCreatesMissingFile(t *testing.T) {
	for _, tc := range []struct{ agent, rel string }{
		{"claude-code", ".claude/settings.json"}, {"gemini", ".gemini/settings.json"},
		{"codex", ".codex/config.toml"}, {"mcp-json", "project/.mcp.json"},
	} {
		h := newSetupHarness(t, true, "yes\n")
		if code := runSetup([]string{tc.agent}, h.env); code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.agent, code, h.stderr.String())
		}
		data, err := os.ReadFile(filepath.Join(h.home, tc.rel))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(h.stdout.String(), "--- /dev/null") {
			t.Errorf("%s: diff header %q", tc.agent, h.stdout.String())
		}
		if tc.agent != "codex" && !gjson.ValidBytes(data) {
			t.Errorf("%s: invalid JSON:\n%s", tc.agent, data)
		}
	}
}

func TestSetupProjectScopeAndMovedBinary(t *testing.T) {
	h := newSetupHarness(t, true, "y\n")
	file := filepath.Join(h.home, "project", ".claude", "settings.local.json")
	copySample(t, "claude-settings.json", file)
	if code := runSetup([]string{"claude-code", "--scope", "local"}, h.env); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	// The binary moved: the existing entry's command is updated in place,
	// not duplicated.
	h2 := newSetupHarness(t, true, "y\n")
	h2.env.home, h2.env.cwd, h2.env.executable = h.home, h.env.cwd, "/usr/local/bin/agentgate"
	if code := runSetup([]string{"claude-code", "--scope", "local"}, h2.env); code != 0 {
		t.Fatalf("exit %d: %s", code, h2.stderr.String())
	}
	data, _ := os.ReadFile(file)
	g := gjson.ParseBytes(data)
	if n := len(g.Get("hooks.PreToolUse").Array()); n != 1 {
		t.Errorf("%d PreToolUse groups, want 1", n)
	}
	if got := g.Get("hooks.PreToolUse.0.hooks.0.command").String(); got != "/usr/local/bin/agentgate hook claude-code" {
		t.Errorf("command %q", got)
	}
}

// writeExecutable creates an executable file (mode 0755) at path.
func writeExecutable(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// hookCommand is the hook command setup writes for the executable exe and
// the words after it: exe as one shell word (display.Word quotes it when it
// holds a space, a backslash — every Windows path — or another character a
// shell would interpret), then the words.
func hookCommand(exe string, words ...string) string {
	return display.Word(exe) + " " + strings.Join(words, " ")
}

func TestHookCommandFor(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "agentgate")
	writeExecutable(t, exe)
	if got, want := hookCommandFor(exe, "codex"), hookCommand(exe, "hook", "codex"); got != want {
		t.Errorf("no agentgate-hook beside agentgate: %q, want %q", got, want)
	}
	lean := filepath.Join(dir, hookExecutableName())
	if err := os.Mkdir(lean, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := hookCommandFor(exe, "codex"), hookCommand(exe, "hook", "codex"); got != want {
		t.Errorf("a directory named agentgate-hook: %q, want %q", got, want)
	}
	if err := os.Remove(lean); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if err := os.WriteFile(lean, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, want := hookCommandFor(exe, "codex"), hookCommand(exe, "hook", "codex"); got != want {
			t.Errorf("agentgate-hook not executable: %q, want %q", got, want)
		}
		if err := os.Remove(lean); err != nil {
			t.Fatal(err)
		}
	}
	writeExecutable(t, lean)
	for _, agent := range []string{"claude-code", "gemini", "codex"} {
		if got, want := hookCommandFor(exe, agent), hookCommand(lean, agent); got != want {
			t.Errorf("agentgate-hook beside agentgate: %q, want %q", got, want)
		}
	}
	spaced := filepath.Join(t.TempDir(), "agent gate")
	if err := os.Mkdir(spaced, 0o755); err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, filepath.Join(spaced, "agentgate"))
	writeExecutable(t, filepath.Join(spaced, hookExecutableName()))
	got := hookCommandFor(filepath.Join(spaced, "agentgate"), "gemini")
	if argv, _ := shellword.AgentCommand(got); len(argv) != 2 || argv[0] != filepath.Join(spaced, hookExecutableName()) || argv[1] != "gemini" {
		t.Errorf("path with a space: command %q reads as %q", got, argv)
	}
}

func TestIsAgentgateHook(t *testing.T) {
	for _, tc := range []struct {
		command, agent string
		want           bool
	}{
		{"/usr/bin/agentgate hook codex", "codex", true},
		{"/usr/bin/agentgate-hook codex", "codex", true},
		{`'/opt/agent gate/agentgate-hook' gemini`, "gemini", true},
		{`C:\\Tools\\agentgate-hook.exe claude-code`, "claude-code", true},
		{`C:\\Tools\\agentgate.exe hook claude-code`, "claude-code", true},
		{"agentgate-hook gemini", "codex", false},
		{"agentgate-hook hook codex", "codex", false},
		{"agentgate codex", "codex", false},
		{"agentgate hook codex extra", "codex", false},
		{"/usr/bin/other-hook codex", "codex", false},
		{"agentgate-hook codex && rm -rf x", "codex", false},
		{"", "codex", false},
	} {
		if got := isAgentgateHook(tc.command, tc.agent); got != tc.want {
			t.Errorf("isAgentgateHook(%q, %q) = %v, want %v", tc.command, tc.agent, got, tc.want)
		}
	}
}

// TestSetupWritesLeanHookBesideAgentgate: with agentgate-hook beside the
// running agentgate, setup writes its path; once it is gone, a second setup
// replaces that entry in place with `agentgate hook`.
func TestSetupWritesLeanHookBesideAgentgate(t *testing.T) {
	bin := t.TempDir()
	exe := filepath.Join(bin, "agentgate")
	lean := filepath.Join(bin, hookExecutableName())
	writeExecutable(t, exe)
	writeExecutable(t, lean)
	h := newSetupHarness(t, true, "y\n")
	h.env.executable = exe
	file := filepath.Join(h.home, ".claude", "settings.json")
	copySample(t, "claude-settings.json", file)
	if code := runSetup([]string{"claude-code"}, h.env); code != 0 {
		t.Fatalf("exit %d: %s", code, h.stderr.String())
	}
	data, _ := os.ReadFile(file)
	if got := gjson.GetBytes(data, "hooks.PreToolUse.0.hooks.0.command").String(); got != hookCommand(lean, "claude-code") {
		t.Errorf("command %q, want %q", got, hookCommand(lean, "claude-code"))
	}
	if err := os.Remove(lean); err != nil {
		t.Fatal(err)
	}
	h2 := newSetupHarness(t, true, "y\n")
	h2.env.home, h2.env.cwd, h2.env.executable = h.home, h.env.cwd, exe
	if code := runSetup([]string{"claude-code"}, h2.env); code != 0 {
		t.Fatalf("exit %d: %s", code, h2.stderr.String())
	}
	data, _ = os.ReadFile(file)
	if n := len(gjson.GetBytes(data, "hooks.PreToolUse").Array()); n != 1 {
		t.Errorf("%d PreToolUse groups, want 1 (replaced in place)", n)
	}
	if got := gjson.GetBytes(data, "hooks.PreToolUse.0.hooks.0.command").String(); got != hookCommand(exe, "hook", "claude-code") {
		t.Errorf("command %q, want %q", got, hookCommand(exe, "hook", "claude-code"))
	}
}

func TestSetupUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"cursor"}, {"gemini", "--scope", "local"}, {"claude-code", "extra"}} {
		h := newSetupHarness(t, true, "y\n")
		if code := runSetup(args, h.env); code != 2 {
			t.Errorf("setup %q: exit %d, want 2", args, code)
		}
	}
}

func TestJSONInsert(t *testing.T) {
	type hook struct {
		A string `json:"a"`
	}
	tests := []struct {
		name, doc string
		path      []string
		appendArr bool
		want      string
	}{
		{"empty doc", "", []string{"x", "y"}, true, "{\n  \"x\": {\n    \"y\": [\n      {\n        \"a\": \"1\"\n      }\n    ]\n  }\n}\n"},
		{"compact doc", `{"k":1}`, []string{"x"}, true, `{"k":1, "x": [{"a":"1"}]}`},
		{"append multiline", "{\n\t\"x\": [\n\t\t1\n\t]\n}", []string{"x"}, true, "{\n\t\"x\": [\n\t\t1,\n\t\t{\n\t\t\t\"a\": \"1\"\n\t\t}\n\t]\n}"},
		{"empty array", "{\n  \"x\": []\n}", []string{"x"}, true, "{\n  \"x\": [\n    {\n      \"a\": \"1\"\n    }\n  ]\n}"},
		{"new key", "{\n  \"m\": {\n    \"b\": 2\n  }\n}", []string{"m", "c"}, false, "{\n  \"m\": {\n    \"b\": 2,\n    \"c\": {\n      \"a\": \"1\"\n    }\n  }\n}"},
	}
	for _, tc := range tests {
		got, err := jsonInsert([]byte(tc.doc), tc.path, hook{"1"}, tc.appendArr)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	for _, bad := range []struct {
		doc  string
		path []string
	}{{`{"x": 1}`, []string{"x"}}, {`{"x": {}}`, []string{"x"}}, {`{"x": [1]}`, []string{"x", "y"}}, {"// c\n{}", []string{"x"}}} {
		if _, err := jsonInsert([]byte(bad.doc), bad.path, hook{"1"}, true); err == nil {
			t.Errorf("jsonInsert(%q, %v): no error", bad.doc, bad.path)
		}
	}
}

func TestUnifiedDiffAppliesWithPatch(t *testing.T) {
	patch, err := execLookPath("patch")
	if err != nil {
		t.Skip("patch is not installed; this test applies diffs with the real patch tool")
	}
	cases := []struct{ a, b string }{
		{"a\nb\nc\n", "a\nb\nX\nc\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "0\n1\n2\n3\n4\n5\n6\nseven\n8\n9\n10\n11\n12\n13\n"},
		{"x\ny", "x\ny\nz\n"},
		{"", "new\n"},
		{"only\n", ""},
	}
	for i, tc := range cases {
		dir := t.TempDir()
		f := filepath.Join(dir, "f")
		if err := os.WriteFile(f, []byte(tc.a), 0o644); err != nil {
			t.Fatal(err)
		}
		d := unifiedDiff("f", "f", []byte(tc.a), []byte(tc.b))
		cmd := execCommand(patch, "-s", "-f", "-p0", f)
		cmd.Stdin = strings.NewReader(d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("case %d: patch: %v: %s\n%s", i, err, out, d)
			continue
		}
		got, _ := os.ReadFile(f)
		if string(got) != tc.b {
			t.Errorf("case %d: patched to %q, want %q\n%s", i, got, tc.b, d)
		}
	}
	if unifiedDiff("a", "b", []byte("same"), []byte("same")) != "" {
		t.Error("diff of equal inputs is not empty")
	}
}

var (
	execLookPath = osexec.LookPath
	execCommand  = osexec.Command
)
