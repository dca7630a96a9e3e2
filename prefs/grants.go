package prefs

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentgate/agentgate/exec/atomicfile"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/exec/procspec"
)

// A grant is a temporary permission a person gave on an approval card or at
// the terminal prompt: "for 15 minutes", "for 1 hour" or "until agentgate
// quits". It allows, like a rule, the program or the exact command — but
// only in one project, only for the executable the command resolved to when
// it was given, only for the provider whose card it was given on (a grant
// given at the terminal applies to every provider in the project), and only
// until it ends. Grants live in grants.json in the state directory, so every
// host (the app, `agentgate run`, `agentgate mcp`, the hook) honours the
// same ones; docs/allow-lists.md describes the file.

// grantsName is the file name, under Paths.StateDir, of the grants.
const grantsName = "grants.json"

// grantsFileVersion is the format version written to grants.json.
const grantsFileVersion = 1

// MaxGrantDuration bounds a timed grant: Give refuses longer ones, and a
// grant in the file that spans more (a hand edit) is never honoured. A
// grant is temporary by definition; what should last is a rule.
const MaxGrantDuration = 24 * time.Hour

// GrantKind says how much of a command a grant covers.
type GrantKind string

// The kinds of grant, chosen as rules are.
const (
	// GrantProgram allows the program (argv[0], resolved to the same
	// executable) with any arguments. Never given for a launcher (IsLauncher).
	GrantProgram GrantKind = "program"
	// GrantExact allows exactly the granted argv: the same tokens, no more,
	// no fewer.
	GrantExact GrantKind = "exact"
)

// Grant is one temporary permission as stored.
type Grant struct {
	// ID names the grant for `agentgate allow revoke ID`: "g-" and 8 hex
	// digits.
	ID string `json:"id"`
	// Kind is program or exact.
	Kind GrantKind `json:"kind"`
	// Tokens are the granted tokens: [argv0] for a program grant, the whole
	// argv for an exact one.
	Tokens []string `json:"tokens"`
	// Executable is the absolute path argv[0] resolved to when the grant was
	// given; a command whose argv[0] resolves to another path is not allowed.
	Executable string `json:"executable"`
	// ProgramID is the identity of the file Executable named then (symlinks
	// followed: device, inode, size, modification and change times); a
	// command whose program is now another file, or the same file changed,
	// is not allowed. nil when the granting host did not know it.
	ProgramID *procspec.FileID `json:"program_id,omitempty"`
	// Project is the project root (absolute, cleaned) the grant applies in.
	Project string `json:"project"`
	// AllProviders is true for a grant given at the terminal: it applies to
	// every provider (and to proposals without one) in Project.
	AllProviders bool `json:"all_providers,omitempty"`
	// Provider is the provider whose card the grant was given on ("" for a
	// proposal without a provider); ignored when AllProviders.
	Provider string `json:"provider,omitempty"`
	// By says where the person gave it: "card" or "terminal".
	By string `json:"by"`
	// Given is when the grant was given. A clock that reads earlier than
	// Given (it was set back) ends the grant.
	Given time.Time `json:"given"`
	// Expires is when a timed grant ends; zero for a grant that lasts until
	// the app instance Instance quits.
	Expires time.Time `json:"expires,omitzero"`
	// Instance is the app instance an "until agentgate quits" grant belongs
	// to (see HoldInstance); "" for a timed grant.
	Instance string `json:"instance,omitempty"`
}

// UntilQuit reports whether the grant lasts until its app instance quits.
func (g Grant) UntilQuit() bool { return g.Instance != "" }

// TimeLeft returns how long the timed grant has left at now (at least 0);
// 0 for an "until agentgate quits" grant.
func (g Grant) TimeLeft(now time.Time) time.Duration {
	if g.UntilQuit() {
		return 0
	}
	return max(g.Expires.Sub(now), 0)
}

// Text is the grant's tokens as an allow-list line (FormatList).
func (g Grant) Text() string { return FormatList(g.Tokens) }

// AllowsText says what the grant allows, for a person: "exactly git
// status", "the program ls" (display form: control and invisible
// characters escaped).
func (g Grant) AllowsText() string {
	if g.Kind == GrantExact {
		return "exactly " + display.Command(g.Tokens)
	}
	return "the program " + display.Command(g.Tokens)
}

// ForText says whom the grant applies to and where it was given: "every
// agent, given at the terminal", "claude-code, given on the card".
func (g Grant) ForText() string {
	who := "every agent"
	switch {
	case !g.AllProviders && g.Provider == "":
		who = "proposals without a provider"
	case !g.AllProviders:
		who = display.Word(g.Provider)
	}
	if g.By == "terminal" {
		return who + ", given at the terminal"
	}
	return who + ", given on the card"
}

// LeftText says how long the grant has left at now: "12 min", "until
// agentgate quits".
func (g Grant) LeftText(now time.Time) string {
	if g.UntilQuit() {
		return "until agentgate quits"
	}
	return display.Duration(g.TimeLeft(now))
}

// sameThing reports whether g and o grant the same thing to the same
// proposers: a new grant for the same thing replaces the old one.
func (g Grant) sameThing(o Grant) bool {
	return g.Kind == o.Kind && slices.Equal(g.Tokens, o.Tokens) && g.Executable == o.Executable && g.Project == o.Project &&
		g.AllProviders == o.AllProviders && (g.AllProviders || g.Provider == o.Provider)
}

// covers reports whether g allows argv run as executable (whose file has
// identity id, zero when unknown) by provider in project, leaving out
// whether g is still in force.
func (g Grant) covers(argv []string, executable string, id procspec.FileID, provider, project string) bool {
	if len(argv) == 0 || len(g.Tokens) == 0 || g.Project != project || g.Executable != executable {
		return false
	}
	if g.ProgramID != nil && (id == procspec.FileID{} || id != *g.ProgramID) {
		return false
	}
	if !g.AllProviders && g.Provider != provider {
		return false
	}
	if g.Kind == GrantExact {
		return slices.Equal(argv, g.Tokens)
	}
	return g.Kind == GrantProgram && len(g.Tokens) == 1 && argv[0] == g.Tokens[0] && !IsLauncher(argv[0])
}

// GrantRequest is what a person chose on a card or at the terminal.
type GrantRequest struct {
	// Kind is program or exact.
	Kind GrantKind
	// Argv is the command shown to the person; a program grant takes its
	// first token.
	Argv []string
	// Executable is the absolute path argv[0] resolved to on the granting
	// host.
	Executable string
	// ProgramID is the identity of that file (exec.Command.ProgramID); the
	// zero value binds the grant to the path only.
	ProgramID procspec.FileID
	// Project is the project root of the proposal.
	Project string
	// AllProviders is true for a grant given at the terminal.
	AllProviders bool
	// Provider is the proposer's provider (card grants).
	Provider string
	// By is "card" or "terminal".
	By string
	// For is how long a timed grant lasts: more than 0, at most
	// MaxGrantDuration. Ignored when Instance is set.
	For time.Duration
	// Instance makes the grant last until that app instance quits (the ID of
	// the Instance the granting app holds).
	Instance string
}

// grantsFile is the content of grants.json.
type grantsFile struct {
	// Version is grantsFileVersion.
	Version int `json:"version"`
	// Grants are the grants in the order they were given.
	Grants []Grant `json:"grants"`
}

// GrantMatch is a grant that allows a command, with the time it has left.
type GrantMatch struct {
	// Grant is the grant that allows it.
	Grant Grant
	// Left is the time the grant has left (0 for an "until agentgate quits"
	// grant).
	Left time.Duration
}

// Grants reads and changes the grants in a state directory. Every call
// reads grants.json afresh, so grants given or revoked by another process
// apply at once; changes are serialised across processes by a lock file
// beside it (grants.json.lock). A grant that ended (expired, or its app
// instance is gone, whatever crashed) is never honoured, and is removed
// from the file by the next call that reads it. Safe for concurrent use.
type Grants struct {
	// paths says where grants.json is (Paths.StateDir).
	paths Paths
	// Now is the clock; nil means time.Now. Tests set a fake one.
	Now func() time.Time
}

// OpenGrants returns the grants kept under p.StateDir. Nothing is read
// until a grant is asked for.
func OpenGrants(p Paths) *Grants {
	return &Grants{paths: p}
}

// now returns the current time on g's clock.
func (g *Grants) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// file returns the path of grants.json.
func (g *Grants) file() string { return filepath.Join(g.paths.StateDir, grantsName) }

// inForce reports whether gr may be honoured at now: a timed grant between
// Given and Expires (and spanning at most MaxGrantDuration), an "until
// agentgate quits" grant while its app instance lives.
func (g *Grants) inForce(gr Grant, now time.Time) bool {
	if now.Before(gr.Given) {
		return false // the clock went back: the grant's span cannot be trusted
	}
	if gr.UntilQuit() {
		return gr.Expires.IsZero() && instanceAlive(g.paths, gr.Instance)
	}
	return now.Before(gr.Expires) && gr.Expires.Sub(gr.Given) <= MaxGrantDuration
}

// read returns the grants in grants.json (none when it is missing).
func (g *Grants) read() ([]Grant, error) {
	data, err := atomicfile.ReadFile(g.file())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the temporary grants in %s: %w", g.file(), err)
	}
	var gf grantsFile
	if err := json.Unmarshal(data, &gf); err != nil {
		return nil, fmt.Errorf("the temporary grants file %s is damaged (%v): delete it to end every grant", g.file(), err)
	}
	if gf.Version != grantsFileVersion {
		return nil, fmt.Errorf("the temporary grants file %s has version %d, this agentgate reads version %d: update agentgate or delete the file to end every grant", g.file(), gf.Version, grantsFileVersion)
	}
	return gf.Grants, nil
}

// live reads the grants and returns those in force at now. When some have
// ended, it removes them from the file (and the lock files of instances that
// are gone); a failure to do so is not an error, since ended grants are
// never honoured anyway.
func (g *Grants) live(now time.Time) ([]Grant, error) {
	all, err := g.read()
	if err != nil {
		return nil, err
	}
	live := slices.DeleteFunc(slices.Clone(all), func(gr Grant) bool { return !g.inForce(gr, now) })
	if len(live) < len(all) {
		_ = g.update(keepLive) // the update itself drops ended grants
	}
	return live, nil
}

// keepLive is the change that keeps the grants in force as they are.
func keepLive(live []Grant) ([]Grant, error) { return live, nil }

// update changes grants.json under its lock: it re-reads the file, drops
// ended grants (and the lock files of app instances that are gone), lets
// change edit the rest and writes the result atomically (mode 0600) when it
// differs from the file; an empty result removes the file.
func (g *Grants) update(change func(live []Grant) ([]Grant, error)) error {
	if err := os.MkdirAll(g.paths.StateDir, 0o700); err != nil {
		return fmt.Errorf("creating the state directory %s: %w", g.paths.StateDir, err)
	}
	unlock, err := lockBeside(g.file())
	if err != nil {
		return err
	}
	defer unlock()
	all, err := g.read()
	if err != nil {
		return err
	}
	now := g.now()
	var live []Grant
	gone := map[string]bool{}
	for _, gr := range all {
		if g.inForce(gr, now) {
			live = append(live, gr)
		} else if gr.UntilQuit() {
			gone[gr.Instance] = true
		}
	}
	next, err := change(live)
	if err != nil {
		return err
	}
	for id := range gone {
		removeInstanceLock(g.paths, id)
	}
	if len(next) == len(all) && slices.EqualFunc(next, all, func(a, b Grant) bool { return a.ID == b.ID && a.Expires.Equal(b.Expires) }) {
		return nil
	}
	if len(next) == 0 {
		if err := os.Remove(g.file()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", g.file(), err)
		}
		return nil
	}
	data, err := json.MarshalIndent(grantsFile{Version: grantsFileVersion, Grants: next}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the temporary grants: %w", err)
	}
	return WriteFileAtomic(g.file(), append(data, '\n'), 0o600)
}

// Give records a grant for what req describes and returns it. A grant for
// the same thing (same kind, tokens, executable, project and providers)
// is replaced, not stacked: its end becomes the new grant's. Give refuses,
// changing nothing, an empty or NUL-holding argv, a relative executable or
// project, an invalid provider name, a program grant for a launcher
// (IsLauncher: allowing the program allows anything, so only the exact
// command may be granted), a duration outside (0, MaxGrantDuration], and an
// "until agentgate quits" grant whose app instance is not running.
func (g *Grants) Give(req GrantRequest) (Grant, error) {
	if err := validateRuleTokens(req.Argv); err != nil {
		return Grant{}, err
	}
	project, ok := cleanRoot(req.Project)
	switch {
	case !ok:
		return Grant{}, fmt.Errorf("project root %q is not an absolute path: pass the result of ProjectRoot", req.Project)
	case !filepath.IsAbs(req.Executable):
		return Grant{}, fmt.Errorf("the executable %q is not an absolute path: a grant is bound to the file the program resolved to", req.Executable)
	case req.Provider != "" && ValidateProviderName(req.Provider) != nil:
		return Grant{}, ValidateProviderName(req.Provider)
	case req.Kind != GrantProgram && req.Kind != GrantExact:
		return Grant{}, fmt.Errorf("unknown grant kind %q: use program or exact", req.Kind)
	case req.Kind == GrantProgram && IsLauncher(req.Argv[0]):
		return Grant{}, fmt.Errorf("%s runs other programs or code, so granting the program would allow anything: grant the exact command instead", req.Argv[0])
	}
	now := g.now()
	gr := Grant{Kind: req.Kind, Tokens: slices.Clone(req.Argv), Executable: filepath.Clean(req.Executable), Project: project,
		AllProviders: req.AllProviders, By: req.By, Given: now}
	if req.ProgramID != (procspec.FileID{}) {
		id := req.ProgramID
		gr.ProgramID = &id
	}
	if !req.AllProviders {
		gr.Provider = req.Provider
	}
	if req.Kind == GrantProgram {
		gr.Tokens = gr.Tokens[:1]
	}
	if req.Instance != "" {
		if !instanceAlive(g.paths, req.Instance) {
			return Grant{}, fmt.Errorf("the app instance %q is not running, so a grant until it quits would end at once", req.Instance)
		}
		gr.Instance = req.Instance
	} else {
		if req.For <= 0 || req.For > MaxGrantDuration {
			return Grant{}, fmt.Errorf("a grant lasts more than 0 and at most %v, not %v: add a rule for something that should last", MaxGrantDuration, req.For)
		}
		gr.Expires = now.Add(req.For)
	}
	err := g.update(func(live []Grant) ([]Grant, error) {
		next := slices.DeleteFunc(live, gr.sameThing)
		for {
			gr.ID = newGrantID()
			if !slices.ContainsFunc(next, func(o Grant) bool { return o.ID == gr.ID }) {
				break
			}
		}
		return append(next, gr), nil
	})
	if err != nil {
		return Grant{}, fmt.Errorf("the grant was not given: %w", err)
	}
	return gr, nil
}

// GrantQuery is a command looking for a grant.
type GrantQuery struct {
	// Argv is the command.
	Argv []string
	// Provider is the proposer's provider ("" for none).
	Provider string
	// Project is the proposal's project root.
	Project string
	// Executable is the absolute path argv[0] resolves to on the host that
	// asks; when "" and a grant could match, Resolve is called for it.
	Executable string
	// ProgramID is the identity of Executable's file (symlinks followed);
	// zero when unknown, which no grant bound to an identity matches.
	ProgramID procspec.FileID
	// Resolve returns the absolute path argv[0] resolves to on the asking
	// host and its file's identity (ok=false: not found); called at most
	// once, and only when a grant for the command exists, so a host that
	// resolves lazily (the hook) pays for it only then. Used when
	// Executable is "".
	Resolve func(argv0 string) (path string, id procspec.FileID, ok bool)
}

// Match returns the grant in force that allows q, with the time it has
// left; ok is false when none does (or grants.json cannot be read: the
// error says why, and nothing is allowed). An exact grant is preferred to
// a program grant, then the one that lasts longest. Reading removes ended
// grants from the file.
func (g *Grants) Match(q GrantQuery) (m GrantMatch, ok bool, err error) {
	project, okRoot := cleanRoot(q.Project)
	if len(q.Argv) == 0 || !okRoot {
		return GrantMatch{}, false, nil
	}
	if _, statErr := os.Stat(g.file()); errors.Is(statErr, fs.ErrNotExist) {
		return GrantMatch{}, false, nil // the common case: no grants at all
	}
	now := g.now()
	live, err := g.live(now)
	if err != nil || len(live) == 0 {
		return GrantMatch{}, false, err
	}
	exe, id := q.Executable, q.ProgramID
	resolved := exe != ""
	var best *Grant
	for i := range live {
		gr := &live[i]
		if gr.Project != project || gr.Executable == "" {
			continue
		}
		if !resolved {
			resolved = true
			if q.Resolve != nil {
				if p, pid, found := q.Resolve(q.Argv[0]); found {
					exe, id = p, pid
				}
			}
		}
		if exe == "" || !gr.covers(q.Argv, exe, id, q.Provider, project) {
			continue
		}
		if best == nil || grantRank(*gr) > grantRank(*best) {
			best = gr
		}
	}
	if best == nil {
		return GrantMatch{}, false, nil
	}
	return GrantMatch{Grant: *best, Left: best.TimeLeft(now)}, true, nil
}

// grantRank orders matching grants: exact before program, then "until
// quits" before the one lasting longest.
func grantRank(gr Grant) int64 {
	rank := gr.Expires.UnixNano()
	if gr.UntilQuit() {
		rank = 1 << 61
	}
	if gr.Kind == GrantExact {
		rank |= 1 << 62
	}
	return rank
}

// List returns the grants in force, soonest to end first ("until
// agentgate quits" grants last; ties in the order given), removing ended
// ones from the file.
func (g *Grants) List() ([]Grant, error) {
	live, err := g.live(g.now())
	slices.SortStableFunc(live, func(a, b Grant) int {
		switch {
		case a.UntilQuit() != b.UntilQuit():
			if a.UntilQuit() {
				return 1
			}
			return -1
		case a.UntilQuit():
			return 0
		}
		return a.Expires.Compare(b.Expires)
	})
	return live, err
}

// Revoke ends the grant with that id at once. It fails when no grant in
// force has that id.
func (g *Grants) Revoke(id string) error {
	return g.update(func(live []Grant) ([]Grant, error) {
		i := slices.IndexFunc(live, func(gr Grant) bool { return gr.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("no grant %q is in force (it may have ended already): list them with `agentgate allow grants`", id)
		}
		return slices.Delete(live, i, i+1), nil
	})
}

// RevokeAll ends every grant and returns how many were in force.
func (g *Grants) RevokeAll() (int, error) {
	n := 0
	err := g.update(func(live []Grant) ([]Grant, error) {
		n = len(live)
		return []Grant{}, nil
	})
	return n, err
}

// newGrantID returns "g-" and 8 random hex digits.
func newGrantID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return "g-" + hex.EncodeToString(b)
}
