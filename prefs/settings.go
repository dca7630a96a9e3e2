package prefs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
)

// settingsName is the file name, under Paths.ConfigDir, of the settings.
const settingsName = "settings.json"

// Settings are the person's choices that other parts of agentgate read. The
// file <config>/agentgate/settings.json is a JSON object whose keys are listed
// on each field; any key may be left out (its default applies). Durations are
// Go duration strings ("90s", "10m"), sizes are byte counts.
type Settings struct {
	// DefaultTimeout ("default_timeout") bounds a command whose proposal names
	// no timeout. Default 120s, range 1s to 600s (the hard maximum).
	DefaultTimeout time.Duration
	// ApprovalExpiry ("approval_expiry") is how long a proposal waits for a
	// person before it expires. Default 10m, range 10s to 24h.
	ApprovalExpiry time.Duration
	// MaxConcurrentRuns ("max_concurrent_runs") caps commands running at once
	// across all agents. Default 8, range 1 to 256.
	MaxConcurrentRuns int
	// MaxPendingPerSession ("max_pending_per_session") caps proposals one
	// agent connection may have waiting for a person. Default 16, range 1 to
	// 1000.
	MaxPendingPerSession int
	// Grace ("grace") is the time between SIGTERM and SIGKILL when a command
	// is stopped. Default 2s, range 100ms to 60s.
	Grace time.Duration
	// RetainRuns ("retain_runs") is how many finished run records (and their
	// output) are kept at least, whatever their age (unless
	// RunsMaxTotalBytes forces otherwise). Default 500, range 10 to 100000.
	RetainRuns int
	// HistorySpan ("history_span") is how far back the audit log and the
	// Processes history (run records) keep everything at least: nothing
	// younger is dropped unless a disk cap (AuditMaxTotalBytes,
	// RunsMaxTotalBytes) leaves no choice, which is audited (history_cap)
	// and notified. Default 720h (30 days), range 24h to 87600h.
	HistorySpan time.Duration
	// AuditMaxBytes ("audit_max_bytes") is the size at which the audit log is
	// rotated. Default 16 MiB, range 1 MiB to 1 GiB, at most a quarter of
	// AuditMaxTotalBytes.
	AuditMaxBytes int64
	// AuditMaxTotalBytes ("audit_max_total_bytes") is the audit log's disk
	// cap: all its files together, the older ones compressed. Default 256
	// MiB, range 8 MiB to 64 GiB.
	AuditMaxTotalBytes int64
	// RunsMaxTotalBytes ("runs_max_total_bytes") is the Processes history's
	// disk cap: all run records and their retained output together; the
	// outputs of the oldest runs go first, then their records. Default 1
	// GiB, range 64 MiB to 1 TiB.
	RunsMaxTotalBytes int64
	// OutputMaxBytes ("output_max_bytes") caps the stdout kept on disk per
	// run; beyond it the newest bytes are kept. Default 64 MiB, range 1 MiB
	// to 1 GiB.
	OutputMaxBytes int64
	// MaxConnections ("max_connections") caps simultaneous agent connections
	// to the bridge. Default 64, range 1 to 1024.
	MaxConnections int
	// IdleTimeout ("idle_timeout") closes an agent connection that sent
	// nothing and has nothing pending for this long. Default 10m, range 10s
	// to 24h.
	IdleTimeout time.Duration
	// WritablePaths ("writable_paths") are the paths a run may write besides
	// the project, its private TMPDIR and the user's cache directory
	// (Linux; docs/lifetime.md). Each is absolute or starts with "~/" (the
	// home directory). Default DefaultWritablePaths: the common toolchains'
	// caches.
	WritablePaths []string
	// Network ("network") is "any" (default) or "none": a run then gets no
	// network (a network namespace with only loopback, or where none can be
	// made, Landlock's TCP rules: TCP only).
	Network string
	// RequireConfinement ("require_confinement") refuses a run whose writes
	// cannot be confined (no Landlock, no shim, not Linux) instead of
	// running it unconfined. Default false.
	RequireConfinement bool
}

// DefaultWritablePaths are the common toolchains' caches outside the user's
// cache directory, writable by runs unless writable_paths says otherwise:
// the subdirectories that hold downloads, not the toolchains'
// configuration or installed programs (~/.cargo/bin, ~/.gradle/init.d and
// ~/.m2/settings.xml stay read-only). docs/lifetime.md lists them.
var DefaultWritablePaths = []string{
	"~/go/pkg/mod",
	"~/.npm",
	"~/.cargo/registry", "~/.cargo/git", "~/.cargo/.package-cache", "~/.cargo/.global-cache",
	"~/.m2/repository",
	"~/.gradle/caches", "~/.gradle/wrapper", "~/.gradle/daemon", "~/.gradle/native",
	"~/.yarn/berry/cache",
	"~/.bun/install/cache",
	"~/.local/share/pnpm/store",
}

// DefaultSettings returns the settings used when the file or a key is
// absent.
func DefaultSettings() Settings {
	return Settings{
		DefaultTimeout:       120 * time.Second,
		ApprovalExpiry:       10 * time.Minute,
		MaxConcurrentRuns:    8,
		MaxPendingPerSession: 16,
		Grace:                2 * time.Second,
		RetainRuns:           500,
		HistorySpan:          30 * 24 * time.Hour,
		AuditMaxBytes:        16 << 20,
		AuditMaxTotalBytes:   256 << 20,
		RunsMaxTotalBytes:    1 << 30,
		OutputMaxBytes:       64 << 20,
		MaxConnections:       64,
		IdleTimeout:          10 * time.Minute,
		WritablePaths:        slices.Clone(DefaultWritablePaths),
		Network:              "any",
		RequireConfinement:   false,
	}
}

// settingField describes one key of settings.json. Loading, saving and
// validating all go through this table.
type settingField struct {
	// key is the JSON key.
	key string
	// ptr returns the field in s: a *time.Duration, *int, *int64, *bool,
	// *string (one of choices) or *[]string (paths: absolute or "~/…").
	ptr func(s *Settings) any
	// min and max bound the value (nanoseconds for durations); unused for
	// booleans, strings and paths.
	min, max int64
	// choices are a *string field's allowed values.
	choices []string
}

// settingFields lists every key, in the order SaveSettings writes them.
var settingFields = []settingField{
	{"default_timeout", func(s *Settings) any { return &s.DefaultTimeout }, int64(time.Second), int64(600 * time.Second), nil},
	{"approval_expiry", func(s *Settings) any { return &s.ApprovalExpiry }, int64(10 * time.Second), int64(24 * time.Hour), nil},
	{"max_concurrent_runs", func(s *Settings) any { return &s.MaxConcurrentRuns }, 1, 256, nil},
	{"max_pending_per_session", func(s *Settings) any { return &s.MaxPendingPerSession }, 1, 1000, nil},
	{"grace", func(s *Settings) any { return &s.Grace }, int64(100 * time.Millisecond), int64(60 * time.Second), nil},
	{"retain_runs", func(s *Settings) any { return &s.RetainRuns }, 10, 100000, nil},
	{"history_span", func(s *Settings) any { return &s.HistorySpan }, int64(24 * time.Hour), int64(87600 * time.Hour), nil},
	{"audit_max_bytes", func(s *Settings) any { return &s.AuditMaxBytes }, 1 << 20, 1 << 30, nil},
	{"audit_max_total_bytes", func(s *Settings) any { return &s.AuditMaxTotalBytes }, 8 << 20, 64 << 30, nil},
	{"runs_max_total_bytes", func(s *Settings) any { return &s.RunsMaxTotalBytes }, 64 << 20, 1 << 40, nil},
	{"output_max_bytes", func(s *Settings) any { return &s.OutputMaxBytes }, 1 << 20, 1 << 30, nil},
	{"max_connections", func(s *Settings) any { return &s.MaxConnections }, 1, 1024, nil},
	{"idle_timeout", func(s *Settings) any { return &s.IdleTimeout }, int64(10 * time.Second), int64(24 * time.Hour), nil},
	{"writable_paths", func(s *Settings) any { return &s.WritablePaths }, 0, 0, nil},
	{"network", func(s *Settings) any { return &s.Network }, 0, 0, []string{"any", "none"}},
	{"require_confinement", func(s *Settings) any { return &s.RequireConfinement }, 0, 0, nil},
}

// rangeText describes the allowed values of f.
func (f settingField) rangeText(s *Settings) string {
	switch f.ptr(s).(type) {
	case *time.Duration:
		return fmt.Sprintf("a duration from %v to %v, written like \"90s\" or \"10m\"", time.Duration(f.min), time.Duration(f.max))
	case *bool:
		return "true or false"
	case *string:
		return "one of " + strings.Join(f.choices, ", ")
	case *[]string:
		return `a list of paths, each absolute or starting with "~/"`
	}
	return fmt.Sprintf("a whole number from %d to %d", f.min, f.max)
}

// check returns an error unless f's value in s is in range.
func (f settingField) check(s *Settings) error {
	var value int64
	var shown string
	switch p := f.ptr(s).(type) {
	case *time.Duration:
		value, shown = int64(*p), fmt.Sprintf("%q", p.String())
	case *int:
		value, shown = int64(*p), fmt.Sprint(*p)
	case *int64:
		value, shown = *p, fmt.Sprint(*p)
	case *bool:
		return nil
	case *string:
		if !slices.Contains(f.choices, *p) {
			return fmt.Errorf("%s = %q is not valid: allowed is %s", f.key, *p, f.rangeText(s))
		}
		return nil
	case *[]string:
		for _, path := range *p {
			if !strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "~/") || strings.IndexByte(path, 0) >= 0 {
				return fmt.Errorf("%s entry %q is not valid: allowed is %s", f.key, path, f.rangeText(s))
			}
		}
		return nil
	}
	if value < f.min || value > f.max {
		return fmt.Errorf("%s = %s is out of range: allowed is %s", f.key, shown, f.rangeText(s))
	}
	return nil
}

// decode sets f's field in s from raw, or says what is wrong with it.
func (f settingField) decode(raw json.RawMessage, s *Settings) error {
	bad := func() error {
		return fmt.Errorf("%s = %s is not valid: allowed is %s", f.key, bytes.TrimSpace(raw), f.rangeText(s))
	}
	switch p := f.ptr(s).(type) {
	case *time.Duration:
		var text string
		if json.Unmarshal(raw, &text) != nil {
			return bad()
		}
		d, err := time.ParseDuration(text)
		if err != nil {
			return bad()
		}
		*p = d
	case *int:
		if json.Unmarshal(raw, p) != nil {
			return bad()
		}
	case *int64, *bool, *string, *[]string:
		if json.Unmarshal(raw, p) != nil {
			return bad()
		}
	}
	return f.check(s)
}

// encode returns f's value in s as JSON.
func (f settingField) encode(s *Settings) any {
	if d, ok := f.ptr(s).(*time.Duration); ok {
		return d.String()
	}
	return f.ptr(s)
}

// Validate returns an error naming the first key whose value is out of range
// and the allowed range, or nil.
func (s Settings) Validate() error {
	for _, f := range settingFields {
		if err := f.check(&s); err != nil {
			return err
		}
	}
	if s.AuditMaxBytes > s.AuditMaxTotalBytes/4 {
		return fmt.Errorf("audit_max_bytes %d is more than a quarter of audit_max_total_bytes %d: the disk cap must hold several rotated files; lower audit_max_bytes or raise audit_max_total_bytes", s.AuditMaxBytes, s.AuditMaxTotalBytes)
	}
	return nil
}

// retiredSettings are keys of earlier versions that are accepted and
// ignored, so that a settings file written by one still loads; they are
// never written. audit_keep_files counted rotated audit logs, which let a
// flood of entries push out the history; history_span and
// audit_max_total_bytes replace it. start_at_login was never read: whether
// agentgate starts at login is the autostart entry itself (Preferences ▸
// Start at login, packaging.EnableAutostart), which the desktop's own
// settings can switch too, so a second copy of it could only disagree.
var retiredSettings = []string{"audit_keep_files", "start_at_login"}

// LoadSettings reads <p.ConfigDir>/settings.json. A missing file gives
// DefaultSettings; a missing key keeps its default. The file must be one JSON
// object; an unknown key (often a typo), a value of the wrong type or out of
// range is an error naming the file, the key, the value and what is allowed,
// and no partial settings are returned.
func LoadSettings(p Paths) (Settings, error) {
	path := p.settingsFile()
	s := DefaultSettings()
	data, err := atomicfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("reading settings %s: %w", path, err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Settings{}, fmt.Errorf("settings file %s is not a JSON object (%v): fix it or delete it to use the defaults", path, err)
	}
	known := make([]string, len(settingFields))
	for i, f := range settingFields {
		known[i] = f.key
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) && !slices.Contains(retiredSettings, k) {
			return Settings{}, fmt.Errorf("settings file %s: unknown key %q: the keys are %s", path, k, strings.Join(known, ", "))
		}
	}
	for _, f := range settingFields {
		if v, ok := raw[f.key]; ok {
			if err := f.decode(v, &s); err != nil {
				return Settings{}, fmt.Errorf("settings file %s: %w", path, err)
			}
		}
	}
	if err := s.Validate(); err != nil {
		return Settings{}, fmt.Errorf("settings file %s: %w", path, err)
	}
	return s, nil
}

// SaveSettings validates s and writes every key to
// <p.ConfigDir>/settings.json atomically (mode 0600), creating the directory
// (0700) when missing. An invalid s writes nothing.
func SaveSettings(p Paths, s Settings) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("settings not saved: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, f := range settingFields {
		value, err := json.Marshal(f.encode(&s))
		if err != nil {
			return fmt.Errorf("encoding setting %s: %w", f.key, err)
		}
		fmt.Fprintf(&b, "  %q: %s", f.key, value)
		if i < len(settingFields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	if err := os.MkdirAll(p.ConfigDir, 0o700); err != nil {
		return fmt.Errorf("creating the config directory %s: %w", p.ConfigDir, err)
	}
	return WriteFileAtomic(p.settingsFile(), b.Bytes(), 0o600)
}
