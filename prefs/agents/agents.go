// Package agents knows the agent CLIs agentgate wires its hook into —
// Claude Code, Gemini CLI and Codex —, the versions of each that agentgate
// was tested with, and what the person wired: `agentgate setup` records the
// version it wired and the app records the version installed when it
// starts, in one small JSON file in the state directory.
//
// Agents update themselves after setup and their hook payloads carry no
// version, so the record is how agentgate knows whether an installed agent
// is newer than any it was tested with: `agentgate setup --check AGENT` and
// the app at start warn about it, and the hook, which reads the record only
// when no person's answer could be had, then answers with a denial rather
// than a format an untested version might treat as no opinion.
//
// The package uses the standard library, prefs and a file lock only, and
// does nothing when it is initialised: the hook links it.
package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
	"github.com/agentgate/agentgate/prefs"
	"github.com/gofrs/flock"
)

// The agents agentgate wires its hook into. Each name is also the hook's
// argument and the provider name the hook decides and asks as.
const (
	// ClaudeCode is Anthropic's Claude Code (npm @anthropic-ai/claude-code).
	ClaudeCode = "claude-code"
	// Gemini is Google's Gemini CLI (npm @google/gemini-cli).
	Gemini = "gemini"
	// Codex is OpenAI's Codex CLI (npm @openai/codex).
	Codex = "codex"
)

// Agent describes one agent CLI.
type Agent struct {
	// Name is the agent's name in agentgate (ClaudeCode, Gemini, Codex).
	Name string
	// Display is the agent's name for people.
	Display string
	// Program is the executable's name on PATH.
	Program string
	// Package is the npm package it is installed from.
	Package string
	// Tested are the versions agentgate's end-to-end tests drive
	// (cli/agente2e), oldest first; the last is the newest tested.
	Tested []string
}

// Known lists the agents, in the order agentgate shows them.
var Known = []Agent{
	{Name: ClaudeCode, Display: "Claude Code", Program: "claude", Package: "@anthropic-ai/claude-code", Tested: []string{"2.1.328"}},
	{Name: Gemini, Display: "Gemini CLI", Program: "gemini", Package: "@google/gemini-cli", Tested: []string{"0.61.0"}},
	{Name: Codex, Display: "Codex", Program: "codex", Package: "@openai/codex", Tested: []string{"0.169.0"}},
}

// Lookup returns the agent named name.
func Lookup(name string) (Agent, bool) {
	for _, a := range Known {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// NewestTested returns the newest version of the agent that agentgate was
// tested with.
func (a Agent) NewestTested() string { return a.Tested[len(a.Tested)-1] }

// semver is a parsed version: MAJOR.MINOR.PATCH with an optional
// -PRERELEASE.
type semver struct {
	// nums are major, minor and patch.
	nums [3]int
	// pre is the pre-release ("" for none).
	pre string
	// text is the version as written.
	text string
}

// scanVersion reads a version at the start of s: digits '.' digits '.'
// digits, then optionally '-' and letters, digits, '.' and '-'. ok is false
// when s does not start with one.
func scanVersion(s string) (v semver, ok bool) {
	i := 0
	for part := 0; part < 3; part++ {
		if part > 0 {
			if i >= len(s) || s[i] != '.' {
				return semver{}, false
			}
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start || i-start > 9 {
			return semver{}, false
		}
		v.nums[part], _ = strconv.Atoi(s[start:i])
	}
	if i+1 < len(s) && s[i] == '-' && isPreChar(s[i+1]) {
		start := i + 1
		i = start
		for i < len(s) && isPreChar(s[i]) {
			i++
		}
		v.pre = strings.TrimRight(s[start:i], ".-")
		i = start + len(v.pre)
		if v.pre == "" {
			i = start - 1
		}
	}
	v.text = s[:i]
	return v, true
}

func isPreChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-'
}

// ParseVersion returns the first version in text, a program's --version
// output ("2.1.328 (Claude Code)", "0.61.0", "codex-cli 0.169.0"): digits
// '.' digits '.' digits not preceded by a digit or '.', with an optional
// pre-release. It returns "" when there is none.
func ParseVersion(text string) string {
	for i := 0; i < len(text); i++ {
		if i > 0 && (text[i-1] >= '0' && text[i-1] <= '9' || text[i-1] == '.') {
			continue
		}
		if v, ok := scanVersion(text[i:]); ok {
			return v.text
		}
	}
	return ""
}

// CompareVersions compares two versions as semantic versions: -1 when a is
// older than b, 0 when they are the same, +1 when a is newer. A version
// with a pre-release is older than the same version without one;
// pre-releases compare by their dot-separated parts (numbers numerically,
// numbers before words). ok is false when either is not exactly a version.
func CompareVersions(a, b string) (cmp int, ok bool) {
	va, oka := scanVersion(a)
	vb, okb := scanVersion(b)
	if !oka || !okb || va.text != a || vb.text != b {
		return 0, false
	}
	for i := range va.nums {
		if va.nums[i] != vb.nums[i] {
			return sign(va.nums[i] - vb.nums[i]), true
		}
	}
	pa, pb := va.pre, vb.pre
	switch {
	case pa == pb:
		return 0, true
	case pa == "":
		return 1, true
	case pb == "":
		return -1, true
	}
	xa, xb := strings.Split(pa, "."), strings.Split(pb, ".")
	for i := 0; i < len(xa) && i < len(xb); i++ {
		na, ea := strconv.Atoi(xa[i])
		nb, eb := strconv.Atoi(xb[i])
		switch {
		case ea == nil && eb == nil && na != nb:
			return sign(na - nb), true
		case ea == nil && eb != nil:
			return -1, true
		case ea != nil && eb == nil:
			return 1, true
		case ea != nil && eb != nil && xa[i] != xb[i]:
			return strings.Compare(xa[i], xb[i]), true
		}
	}
	return sign(len(xa) - len(xb)), true
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// Support says how a version of an agent relates to the tested ones.
type Support int

const (
	// SupportUnknown: the version is not known (never recorded, or the
	// program could not be asked).
	SupportUnknown Support = iota
	// SupportTested: not newer than the newest tested version.
	SupportTested
	// SupportNewer: newer than every tested version.
	SupportNewer
)

// SupportOf says how version relates to a's tested versions.
func (a Agent) SupportOf(version string) Support {
	c, ok := CompareVersions(version, a.NewestTested())
	switch {
	case !ok:
		return SupportUnknown
	case c > 0:
		return SupportNewer
	}
	return SupportTested
}

// Record is what agentgate knows about one agent on this machine.
type Record struct {
	// Executable is the absolute path of the agent's program that was asked
	// for its version ("" when it was not found).
	Executable string `json:"executable,omitempty"`
	// SettingsFile is the settings file `agentgate setup` wrote the hook
	// into.
	SettingsFile string `json:"settings_file,omitempty"`
	// WiredVersion is the agent's version when `agentgate setup` wired it
	// ("" when unknown).
	WiredVersion string `json:"wired_version,omitempty"`
	// WiredAt is when setup wired it.
	WiredAt time.Time `json:"wired_at,omitzero"`
	// InstalledVersion is the version found by the latest check ("" when
	// unknown).
	InstalledVersion string `json:"installed_version,omitempty"`
	// CheckedAt is when that check ran.
	CheckedAt time.Time `json:"checked_at,omitzero"`
}

// Version is the newest knowledge of the agent's version: the installed
// version from the latest check, else the version setup wired ("" when
// neither is known).
func (r Record) Version() string {
	if r.InstalledVersion != "" {
		return r.InstalledVersion
	}
	return r.WiredVersion
}

// recordsName is the records file's name in the state directory.
const recordsName = "agents.json"

// RecordsPath returns the records file in stateDir.
func RecordsPath(stateDir string) string { return filepath.Join(stateDir, recordsName) }

// LoadRecords reads the records in stateDir (an absolute path); a missing
// file is no records.
// A record for an agent this version of agentgate does not know is kept.
func LoadRecords(stateDir string) (map[string]Record, error) {
	if !filepath.IsAbs(stateDir) {
		return nil, fmt.Errorf("the agent records need an absolute state directory, not %q", stateDir)
	}
	data, err := atomicfile.ReadFile(RecordsPath(stateDir))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Record{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the agent records: %w", err)
	}
	recs := map[string]Record{}
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("reading the agent records %s: %w", RecordsPath(stateDir), err)
	}
	return recs, nil
}

// UpdateRecord changes the record of agent in stateDir (an absolute path)
// with edit and writes
// the file atomically, under a lock beside it so that setup and the app do
// not lose each other's changes.
func UpdateRecord(stateDir, agent string, edit func(*Record)) error {
	if !filepath.IsAbs(stateDir) {
		return fmt.Errorf("the agent records need an absolute state directory, not %q", stateDir)
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", stateDir, err)
	}
	path := RecordsPath(stateDir)
	lock := flock.New(path+".lock", flock.SetPermissions(0o600))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("locking %s: %w", path+".lock", err)
	}
	defer func() { lock.Unlock(); lock.Close() }()
	recs, err := LoadRecords(stateDir)
	if err != nil {
		return err
	}
	r := recs[agent]
	edit(&r)
	recs[agent] = r
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(recs); err != nil {
		return err
	}
	return prefs.WriteFileAtomic(path, b.Bytes(), 0o600)
}

// ClaudeAskShowsPrompt reports whether the hook may answer Claude Code
// "ask" when no person's answer could be had through agentgate: only when
// the recorded Claude Code version is one agentgate was tested with, whose
// "ask" shows Claude's own prompt (and is a denial in -p mode). An unknown
// or newer version gets a denial instead. It reads the records in
// stateDir; an unreadable file counts as unknown.
func ClaudeAskShowsPrompt(stateDir string) bool {
	recs, err := LoadRecords(stateDir)
	if err != nil {
		return false
	}
	a, _ := Lookup(ClaudeCode)
	return a.SupportOf(recs[ClaudeCode].Version()) == SupportTested
}

// VersionTimeout bounds how long asking an agent for its version may take
// (a Node.js program's start on a busy machine).
const VersionTimeout = 20 * time.Second

// InstalledVersion runs `program --version` (program a name looked up on
// PATH, or a path) within VersionTimeout and returns the program's
// absolute path and the version it printed. It fails when the program is
// not found, fails, or prints no version.
func InstalledVersion(ctx context.Context, program string) (path, version string, err error) {
	path, err = osexec.LookPath(program)
	if err != nil {
		return "", "", fmt.Errorf("%s is not installed (not found on PATH): %w", program, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	ctx, cancel := context.WithTimeout(ctx, VersionTimeout)
	defer cancel()
	cmd := osexec.CommandContext(ctx, path, "--version")
	// The agents may check for updates or print banners when their stdin is
	// a terminal; --version should do neither, and gets no stdin.
	cmd.Stdin = nil
	out, err := cmd.Output()
	if err != nil {
		return path, "", fmt.Errorf("asking %s for its version: %w", path, err)
	}
	version = ParseVersion(string(out))
	if version == "" {
		return path, "", fmt.Errorf("%s --version printed no version: %q", path, strings.TrimSpace(string(out)))
	}
	return path, version, nil
}

// VersionFinding is the outcome of checking one agent's installed version.
type VersionFinding struct {
	// Agent is the agent checked.
	Agent Agent
	// Executable is the program asked ("" when not found).
	Executable string
	// Version is the installed version ("" when unknown).
	Version string
	// Support relates Version to the tested versions.
	Support Support
	// Err says why the version is unknown.
	Err error
}

// Warning returns the sentence to show the person, or "" when the
// installed version is one agentgate was tested with.
func (f VersionFinding) Warning() string {
	tested := strings.Join(f.Agent.Tested, ", ")
	switch f.Support {
	case SupportNewer:
		return fmt.Sprintf("%s %s is newer than the versions agentgate was tested with (%s): agentgate still allows what a rule or a person allowed and denies everything else, but check that its answers still work (agentgate setup --check %s) and update agentgate when a newer one is tested",
			f.Agent.Display, f.Version, tested, f.Agent.Name)
	case SupportUnknown:
		return fmt.Sprintf("the version of %s could not be found (%v); agentgate was tested with %s and denies, rather than hands to %s's own prompt, what no person could answer",
			f.Agent.Display, f.Err, tested, f.Agent.Display)
	}
	return ""
}

// CheckVersion asks agent's program for its version — the executable
// recorded by setup when it still exists, else the program on PATH —,
// records what it found in stateDir, and returns the finding. Recording
// errors are returned beside the finding.
func CheckVersion(ctx context.Context, stateDir string, agent Agent) (VersionFinding, error) {
	program := agent.Program
	if recs, err := LoadRecords(stateDir); err == nil {
		if exe := recs[agent.Name].Executable; exe != "" {
			if _, err := os.Stat(exe); err == nil {
				program = exe
			}
		}
	}
	path, version, err := InstalledVersion(ctx, program)
	f := VersionFinding{Agent: agent, Executable: path, Version: version, Support: agent.SupportOf(version), Err: err}
	recErr := UpdateRecord(stateDir, agent.Name, func(r *Record) {
		if path != "" {
			r.Executable = path
		}
		r.InstalledVersion = version
		r.CheckedAt = time.Now().UTC()
	})
	return f, recErr
}

// CheckWired checks the installed version of every agent that setup wired
// (every agent with a record in stateDir), for the app at start, and
// returns the warnings to show, one sentence per agent. It runs the agents'
// programs, so it belongs off every latency-critical path.
func CheckWired(ctx context.Context, stateDir string) []string {
	recs, err := LoadRecords(stateDir)
	if err != nil {
		return []string{err.Error()}
	}
	names := make([]string, 0, len(recs))
	for name, r := range recs {
		if r.SettingsFile != "" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var warnings []string
	for _, name := range names {
		agent, ok := Lookup(name)
		if !ok {
			continue
		}
		f, err := CheckVersion(ctx, stateDir, agent)
		if w := f.Warning(); w != "" {
			warnings = append(warnings, w)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("recording the version of %s: %v", agent.Display, err))
		}
	}
	return warnings
}
