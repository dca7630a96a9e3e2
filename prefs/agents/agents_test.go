package agents

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"2.1.328 (Claude Code)\n", "2.1.328"},
		{"0.61.0\n", "0.61.0"},
		{"codex-cli 0.169.0\n", "codex-cli 0.169.0"[10:]},
		{"v1.2.3-beta.1+build", "1.2.3-beta.1"},
		{"1.2.3-.", "1.2.3"},
		{"1.2.3-", "1.2.3"},
		{"version 10.20", ""},
		{"1.2.3.4", "1.2.3"},
		{"x11.2.3", "11.2.3"},
		{"", ""},
		{"9999999999.1.1 then 1.2.3", "1.2.3"},
	} {
		if got := ParseVersion(tc.in); got != tc.want {
			t.Errorf("ParseVersion(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
		ok   bool
	}{
		{"0.169.0", "0.169.0", 0, true},
		{"0.170.0", "0.169.0", 1, true},
		{"0.169.0", "0.170.0", -1, true},
		{"0.169.10", "0.169.9", 1, true},
		{"1.0.0", "0.999.999", 1, true},
		{"2.1.328-beta", "2.1.328", -1, true},
		{"2.1.328", "2.1.328-beta", 1, true},
		{"1.0.0-alpha.2", "1.0.0-alpha.10", -1, true},
		{"1.0.0-alpha.1", "1.0.0-alpha.beta", -1, true},
		{"1.0.0-alpha", "1.0.0-alpha.1", -1, true},
		{"1.0.0-rc", "1.0.0-beta", 1, true},
		{"1.0", "1.0.0", 0, false},
		{"v1.0.0", "1.0.0", 0, false},
		{"", "1.0.0", 0, false},
	} {
		got, ok := CompareVersions(tc.a, tc.b)
		if got != tc.want || ok != tc.ok {
			t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSupportOf(t *testing.T) {
	codex, _ := Lookup(Codex)
	for v, want := range map[string]Support{
		"0.169.0": SupportTested, "0.168.2": SupportTested, "0.170.0": SupportNewer,
		"0.169.1-alpha": SupportNewer, "": SupportUnknown, "latest": SupportUnknown,
	} {
		if got := codex.SupportOf(v); got != want {
			t.Errorf("SupportOf(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestRecordsAndClaudeAsk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if ClaudeAskShowsPrompt(dir) {
		t.Error("no record: Claude's ask allowed; want a denial for an unknown version")
	}
	set := func(v string) {
		t.Helper()
		if err := UpdateRecord(dir, ClaudeCode, func(r *Record) { r.WiredVersion = "2.1.328"; r.InstalledVersion = v }); err != nil {
			t.Fatal(err)
		}
	}
	set("")
	if !ClaudeAskShowsPrompt(dir) {
		t.Error("wired tested version, no check yet: want ask")
	}
	set("2.1.400")
	if ClaudeAskShowsPrompt(dir) {
		t.Error("installed newer version: want a denial")
	}
	set("2.1.300")
	if !ClaudeAskShowsPrompt(dir) {
		t.Error("installed older version: want ask")
	}
	if err := UpdateRecord(dir, Codex, func(r *Record) { r.SettingsFile = "/x/config.toml" }); err != nil {
		t.Fatal(err)
	}
	recs, err := LoadRecords(dir)
	if err != nil || recs[ClaudeCode].InstalledVersion != "2.1.300" || recs[Codex].SettingsFile != "/x/config.toml" {
		t.Fatalf("records %+v, %v: both agents' records kept", recs, err)
	}
	if info, err := os.Stat(RecordsPath(dir)); err != nil || (runtime.GOOS != "windows" && info.Mode().Perm() != 0o600) {
		t.Errorf("records file: %v %v", info, err)
	}
	if err := os.WriteFile(RecordsPath(dir), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ClaudeAskShowsPrompt(dir) {
		t.Error("unreadable records: want a denial")
	}
}

// fakeAgent writes a program printing out for --version into a directory
// and returns the directory.
func fakeAgent(t *testing.T, name, out string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell script agents")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\necho '" + out + "'\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCheckVersionAndCheckWired(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	codex, _ := Lookup(Codex)
	bin := fakeAgent(t, "codex", "codex-cli 0.170.1")
	t.Setenv("PATH", bin)
	if w := CheckWired(context.Background(), state); len(w) != 0 {
		t.Errorf("nothing wired: warnings %q", w)
	}
	if err := UpdateRecord(state, Codex, func(r *Record) { r.SettingsFile = "/x/config.toml"; r.WiredVersion = "0.169.0" }); err != nil {
		t.Fatal(err)
	}
	w := CheckWired(context.Background(), state)
	if len(w) != 1 || !strings.Contains(w[0], "Codex 0.170.1 is newer") || !strings.Contains(w[0], "0.169.0") {
		t.Errorf("newer codex: warnings %q", w)
	}
	recs, _ := LoadRecords(state)
	if r := recs[Codex]; r.InstalledVersion != "0.170.1" || r.Executable != filepath.Join(bin, "codex") || r.WiredVersion != "0.169.0" {
		t.Errorf("record %+v", r)
	}
	if err := os.WriteFile(filepath.Join(bin, "codex"), []byte("#!/bin/sh\necho 'codex-cli 0.169.0'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := CheckVersion(context.Background(), state, codex)
	if err != nil || f.Support != SupportTested || f.Warning() != "" {
		t.Errorf("tested codex: %+v %v", f, err)
	}
	t.Setenv("PATH", t.TempDir())
	if err := os.Remove(filepath.Join(bin, "codex")); err != nil {
		t.Fatal(err)
	}
	f, _ = CheckVersion(context.Background(), state, codex)
	if f.Support != SupportUnknown || !strings.Contains(f.Warning(), "could not be found") {
		t.Errorf("missing codex: %+v %q", f, f.Warning())
	}
}

func TestRecordsNeedAbsoluteStateDir(t *testing.T) {
	if err := UpdateRecord("", Codex, func(*Record) {}); err == nil {
		t.Error("UpdateRecord with no state directory wrote somewhere")
	}
	if _, err := LoadRecords("state"); err == nil {
		t.Error("LoadRecords read a relative state directory")
	}
	if ClaudeAskShowsPrompt("") {
		t.Error("no state directory: want a denial")
	}
}
