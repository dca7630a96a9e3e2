package prefs

import (
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestLoadSettingsDefaultsWhenAbsent(t *testing.T) {
	s, err := LoadSettings(testPaths(t))
	if err != nil || !reflect.DeepEqual(s, DefaultSettings()) {
		t.Fatalf("LoadSettings = %+v, %v; want defaults", s, err)
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
}

func TestSaveLoadSettings(t *testing.T) {
	p := testPaths(t)
	want := DefaultSettings()
	want.DefaultTimeout = 90 * time.Second
	want.MaxConcurrentRuns = 3
	want.AuditMaxBytes = 2 << 20
	want.WritablePaths = []string{"~/.npm", "/opt/cache"}
	want.Network = "none"
	want.RequireConfinement = true
	if err := SaveSettings(p, want); err != nil {
		t.Fatal(err)
	}
	got, err := LoadSettings(p)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadSettings = %+v, %v; want %+v", got, err, want)
	}
	info, err := os.Stat(p.settingsFile())
	if err != nil || (runtime.GOOS != "windows" && info.Mode().Perm() != 0o600) {
		t.Fatalf("settings file: %v %v", info, err)
	}
	bad := want
	bad.Grace = time.Hour
	if err := SaveSettings(p, bad); err == nil || !strings.Contains(err.Error(), "grace") {
		t.Fatalf("saving an invalid value: %v", err)
	}
	if got, _ := LoadSettings(p); !reflect.DeepEqual(got, want) {
		t.Fatal("an invalid save must write nothing")
	}
}

func TestLoadSettingsPartialAndErrors(t *testing.T) {
	tests := []struct {
		content string
		want    []string // fragments of the error; nil for success
	}{
		{`{"approval_expiry": "5m"}`, nil},
		{`{}`, nil},
		{`{"default_timeout": "700s"}`, []string{"default_timeout", `"11m40s"`, "1s to 10m0s"}},
		{`{"default_timeout": 120}`, []string{"default_timeout", "120", "duration"}},
		{`{"default_timeout": "soon"}`, []string{"default_timeout", `"soon"`}},
		{`{"max_concurrent_runs": 0}`, []string{"max_concurrent_runs", "= 0", "1 to 256"}},
		{`{"max_concurrent_runs": 2.5}`, []string{"max_concurrent_runs", "2.5", "whole number"}},
		{`{"start_at_login": true}`, nil},
		{`{"max_concurent_runs": 2}`, []string{"unknown key", "max_concurent_runs", "max_concurrent_runs"}},
		{`[1]`, []string{"not a JSON object"}},
	}
	for _, tt := range tests {
		p := testPaths(t)
		writeFile(t, p.settingsFile(), tt.content)
		s, err := LoadSettings(p)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.content, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted as %+v", tt.content, s)
			continue
		}
		for _, frag := range append(tt.want, p.settingsFile()) {
			if !strings.Contains(err.Error(), frag) {
				t.Errorf("%s: error %q does not mention %q", tt.content, err, frag)
			}
		}
	}
	p := testPaths(t)
	writeFile(t, p.settingsFile(), `{"approval_expiry": "5m"}`)
	s, _ := LoadSettings(p)
	if s.ApprovalExpiry != 5*time.Minute || s.DefaultTimeout != DefaultSettings().DefaultTimeout {
		t.Fatalf("partial file: %+v", s)
	}
}

func TestIsLauncher(t *testing.T) {
	tests := []struct {
		argv0   string
		windows bool
		want    bool
	}{
		{"bash", false, true},
		{"/usr/bin/python3", false, true},
		{"python3.12", false, true},
		{"perl5.36", false, true},
		{"node-18", false, true},
		{"/opt/homebrew/bin/env", false, true},
		{"git", false, true},
		{"ls", false, false},
		{"cat", false, false},
		{"gitx", false, false},
		{"python-config", false, false},
		{"3", false, false},
		{`C:\Windows\System32\cmd.exe`, true, true},
		{`C:\Tools\PowerShell.EXE`, true, true},
		{`C:\Python312\python3.12.exe`, true, true},
		{`npx.cmd`, true, true},
		{`notepad.exe`, true, false},
		{`dir\bash`, false, false}, // a backslash is part of a Unix file name
	}
	for _, tt := range tests {
		if got := isLauncherName(tt.argv0, tt.windows); got != tt.want {
			t.Errorf("isLauncherName(%q, windows=%v) = %v, want %v", tt.argv0, tt.windows, got, tt.want)
		}
	}
}

func TestPreviewRule(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	past := []PastCommand{
		{Argv: []string{"git", "status"}, Provider: "codex", Project: "/p", Time: t0},
		{Argv: []string{"git", "statusx"}, Provider: "codex", Project: "/p", Time: t0.Add(time.Minute)},
		{Argv: []string{"git", "status", "-s"}, Provider: "claude-code", Project: "/q", Time: t0.Add(2 * time.Minute)},
		{Argv: []string{"git"}, Provider: "codex", Project: "/p/", Time: t0.Add(3 * time.Minute)},
	}
	tests := []struct {
		rule  Rule
		total int
		first int // index in past of the newest match, -1 when none
	}{
		{Rule{Tokens: []string{"git", "status"}, Scope: ScopeGlobal}, 2, 2},
		{Rule{Tokens: []string{"git", "status"}, Scope: ScopeProvider, Provider: "codex"}, 1, 0},
		{Rule{Tokens: []string{"git"}, Scope: ScopeProject, Project: "/p"}, 3, 3},
		{Rule{Tokens: []string{"git"}, Scope: ScopeProject, Project: "/r"}, 0, -1},
		{Rule{Scope: ScopeGlobal}, 0, -1},
	}
	for _, tt := range tests {
		got := PreviewRule(tt.rule, past)
		if got.Total != tt.total || len(got.Matched) != tt.total {
			t.Errorf("PreviewRule(%+v) = %d matches (%d listed), want %d", tt.rule, got.Total, len(got.Matched), tt.total)
			continue
		}
		if tt.first >= 0 && !got.Matched[0].Time.Equal(past[tt.first].Time) {
			t.Errorf("PreviewRule(%+v) lists %v first, want the newest %v", tt.rule, got.Matched[0].Argv, past[tt.first].Argv)
		}
	}
	many := make([]PastCommand, MaxPreviewMatches+5)
	for i := range many {
		many[i] = PastCommand{Argv: []string{"ls"}, Time: t0.Add(time.Duration(i) * time.Second)}
	}
	got := PreviewRule(Rule{Tokens: []string{"ls"}, Scope: ScopeGlobal}, many)
	if got.Total != len(many) || len(got.Matched) != MaxPreviewMatches || !got.Matched[0].Time.Equal(many[len(many)-1].Time) {
		t.Fatalf("capped preview: total %d, listed %d", got.Total, len(got.Matched))
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/f"
	if err := WriteFileAtomic(path, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); got != "two" {
		t.Fatalf("content %q", got)
	}
	if info, _ := os.Stat(path); runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", info.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	if err := WriteFileAtomic(dir+"/missing/f", []byte("x"), 0o600); err == nil {
		t.Fatal("a missing directory must be an error")
	}
}

// TestHistorySettings: a settings file of an earlier version with
// audit_keep_files still loads; the rotation size must leave the disk cap
// room for several files.
func TestHistorySettings(t *testing.T) {
	p := testPaths(t)
	writeFile(t, p.settingsFile(), `{"audit_keep_files": 5, "start_at_login": false, "history_span": "1000h", "audit_max_total_bytes": 67108864}`)
	s, err := LoadSettings(p)
	if err != nil || s.HistorySpan != 1000*time.Hour || s.AuditMaxTotalBytes != 64<<20 {
		t.Fatalf("LoadSettings = %+v, %v", s, err)
	}
	writeFile(t, p.settingsFile(), `{"audit_max_bytes": 33554432, "audit_max_total_bytes": 67108864}`)
	if _, err := LoadSettings(p); err == nil || !strings.Contains(err.Error(), "quarter") {
		t.Fatalf("a rotation size of half the cap: %v", err)
	}
	if err := SaveSettings(p, DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	if text := readFile(t, p.settingsFile()); strings.Contains(text, "audit_keep_files") || strings.Contains(text, "start_at_login") {
		t.Fatal("a retired key was written")
	}
}

// TestConfinementSettingsRefuseBadValues: network is any or none, and every
// writable path is absolute or starts with "~/".
func TestConfinementSettingsRefuseBadValues(t *testing.T) {
	p := testPaths(t)
	for _, body := range []string{
		`{"network": "some"}`,
		`{"network": 1}`,
		`{"writable_paths": ["relative/path"]}`,
		`{"writable_paths": "~/.npm"}`,
		`{"require_confinement": "yes"}`,
	} {
		writeFile(t, p.settingsFile(), body)
		if _, err := LoadSettings(p); err == nil {
			t.Errorf("settings %s were accepted", body)
		}
	}
	writeFile(t, p.settingsFile(), `{"writable_paths": [], "network": "none"}`)
	s, err := LoadSettings(p)
	if err != nil || len(s.WritablePaths) != 0 || s.Network != "none" {
		t.Errorf("LoadSettings = %+v, %v; want no writable paths and network none", s, err)
	}
}
