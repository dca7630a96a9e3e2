package prefs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentgate/agentgate/exec/atomicfile"
	"github.com/fsnotify/fsnotify"
	"github.com/gofrs/flock"

	"github.com/agentgate/agentgate/exec/display"
)

// Query is one command to decide.
type Query struct {
	// Argv is the command.
	Argv []string
	// Provider is the proposer's provider name ("" for none): its list is
	// consulted when it is a valid name.
	Provider string
	// ProjectRoot is the project's root (the result of ProjectRoot; ""
	// for none): its confirmed rules are consulted.
	ProjectRoot string
	// Dir is the absolute working directory the command runs in: a git
	// command's repository is found from it (see Guard). "" means unknown,
	// which keeps a git command from running without a person.
	Dir string
}

// Decision is the answer for one command: the rule decision and the
// argument guard in one.
type Decision struct {
	// Allowed is true when the command may run without asking a person:
	// an active rule's tokens are a prefix of argv and the argument guard
	// found nothing beyond them.
	Allowed bool
	// Rule is the rule that matched (its scope, file and line are the
	// provenance), also when Findings keep it from allowing; nil when no
	// rule matched. It is shared: do not modify it.
	Rule *Rule
	// Findings are the argument guard's reasons, beyond Rule's tokens,
	// for asking a person (see Guard); for a command no rule matches,
	// every finding, for the person to see. nil when there are none.
	Findings []Finding
}

// listState is one allow-list file as last read.
type listState struct {
	// rules are the file's rules in line order, with scope fields and Active
	// set.
	rules []Rule
	// errs are the file's malformed lines.
	errs []ParseError
	// readErr is the error reading the file, other than its absence; the list
	// then allows nothing.
	readErr error
	// trie holds the active rules.
	trie *trieNode
}

// snapshot is everything Decide needs, immutable once published: a reload
// builds a new snapshot and swaps it in whole, so a reader sees the old rule
// set or the new one, never a gap.
type snapshot struct {
	// global is the global list.
	global *listState
	// providers holds the provider lists loaded so far, by provider name.
	providers map[string]*listState
	// projects holds the project lists loaded so far, by cleaned root.
	projects map[string]*listState
	// trust is the confirmed rule hashes per project root.
	trust trustSet
}

// Store holds the allow-lists of one person: the global list, read by Open,
// and provider and project lists, read the first time they are asked for.
// Decisions read an immutable snapshot; edits and reloads replace it. A Store
// is safe for concurrent use. Without Watch, a Store sees the files as they
// were when first read, plus its own edits.
type Store struct {
	// paths says where the files are.
	paths Paths
	// snap is the current snapshot; never nil after Open.
	snap atomic.Pointer[snapshot]
	// mu serialises building and swapping snapshots, and guards the fields
	// below.
	mu sync.Mutex
	// changed is closed when the snapshot is next replaced.
	changed chan struct{}
	// watcher is the running fsnotify watcher, nil when not watching.
	watcher *fsnotify.Watcher
}

// Open reads the global allow-list and the project trust state under p and
// returns a Store. A missing file is an empty list. It fails when p's
// directories are not absolute, when the global list exists but cannot be
// read, or when trust.json is damaged (the error says how to recover).
// Malformed lines are not errors: see Rules.
func Open(p Paths) (*Store, error) {
	if !filepath.IsAbs(p.ConfigDir) || !filepath.IsAbs(p.StateDir) {
		return nil, fmt.Errorf("agentgate directories must be absolute paths, got config %q and state %q", p.ConfigDir, p.StateDir)
	}
	trust, err := readTrust(p)
	if err != nil {
		return nil, err
	}
	s := &Store{paths: p, changed: make(chan struct{})}
	global := s.loadList(ScopeGlobal, "", "", nil)
	if global.readErr != nil {
		return nil, global.readErr
	}
	s.snap.Store(&snapshot{global: global, providers: map[string]*listState{}, projects: map[string]*listState{}, trust: trust})
	return s, nil
}

// loadList reads one allow-list and builds its state. For ScopeProject a rule
// is active only when its hash is in trust's set for the project.
func (s *Store) loadList(scope Scope, provider, root string, trust trustSet) *listState {
	file, err := s.FileFor(scope, provider, root)
	if err != nil {
		return &listState{readErr: err, trie: &trieNode{}}
	}
	content, err := atomicfile.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &listState{readErr: fmt.Errorf("reading allow-list %s: %w (its rules are not applied until it can be read)", file, err), trie: &trieNode{}}
	}
	parsed, errs := parseListFile(content)
	state := &listState{rules: make([]Rule, len(parsed)), errs: errs}
	for i := range state.errs {
		state.errs[i].File = file
	}
	for i, pl := range parsed {
		state.rules[i] = Rule{Tokens: pl.tokens, Scope: scope, Provider: provider, Project: root, File: file, Line: pl.line,
			Active: scope != ScopeProject || trust[root][ruleHash(pl.tokens)]}
	}
	state.trie = buildTrie(state.rules)
	return state
}

// publishLocked makes next the current snapshot and wakes Changed waiters.
// s.mu must be held.
func (s *Store) publishLocked(next *snapshot) {
	s.snap.Store(next)
	close(s.changed)
	s.changed = make(chan struct{})
}

// clone returns a shallow copy of snap whose maps may be changed.
func (snap *snapshot) clone() *snapshot {
	next := *snap
	next.providers = make(map[string]*listState, len(snap.providers)+1)
	for k, v := range snap.providers {
		next.providers[k] = v
	}
	next.projects = make(map[string]*listState, len(snap.projects)+1)
	for k, v := range snap.projects {
		next.projects[k] = v
	}
	return &next
}

// Changed returns a channel that is closed the next time the rules the Store
// holds are replaced: after a reload by Watch, an edit, a trust change or the
// first reading of a provider or project list.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// providerList returns the provider's list, reading it on first use; nil
// when name is not a valid provider name.
func (s *Store) providerList(name string) *listState {
	if ls, ok := s.snap.Load().providers[name]; ok {
		return ls
	}
	if ValidateProviderName(name) != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snap.Load()
	if ls, ok := snap.providers[name]; ok {
		return ls
	}
	next := snap.clone()
	next.providers[name] = s.loadList(ScopeProvider, name, "", nil)
	s.publishLocked(next)
	return next.providers[name]
}

// projectList returns the list of the project at root, reading it (and, when
// watching, starting to watch it) on first use; nil for an empty or relative
// root.
func (s *Store) projectList(root string) *listState {
	key, ok := cleanRoot(root)
	if !ok {
		return nil
	}
	if ls, ok := s.snap.Load().projects[key]; ok {
		return ls
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snap.Load()
	if ls, ok := snap.projects[key]; ok {
		return ls
	}
	next := snap.clone()
	next.projects[key] = s.loadList(ScopeProject, "", key, snap.trust)
	s.watchProjectLocked(key)
	s.publishLocked(next)
	return next.projects[key]
}

// Decide answers whether q.Argv may run without asking a person, for a
// proposal from q.Provider in the project at q.ProjectRoot, run in q.Dir.
// The scopes consulted are the global list, the provider's list (none when
// the provider is empty or not a valid name) and the project's active rules
// (none when the root is empty or relative). Tokens compare exactly: no
// globs, no case folding, no path normalisation of argv[0]. When several
// rules match, the broadest (fewest tokens) is reported; on a tie the
// global rule before the provider's before the project's, then the lowest
// line. A matched command is then put to the argument guard (Guard) with
// the rule's length: it is allowed only when the guard finds nothing; when
// the broadest rule leaves findings, the longest matching rule (an exact
// rule a person wrote for this command, say) is tried and reported. An
// empty argv is never allowed. Decide reads no allow-list once the lists
// involved have been read: the rule match costs the same for 10 rules as
// for 100,000; the guard reads argv and, for git, the repository's
// configuration.
//
// Decide is the one decision every host makes (socket, MCP, `agentgate
// run`, the hook, `agentgate allow check`); other sources of permission
// (temporary grants) join it by matching their own prefix and calling
// Guard the same way.
func (s *Store) Decide(q Query) Decision {
	d := s.match(q.Argv, q.Provider, q.ProjectRoot)
	ruleLen := 0
	if d.Rule != nil {
		ruleLen = len(d.Rule.Tokens)
	}
	if len(q.Argv) > 0 {
		d.Findings = Guard(q.Argv, ruleLen, q.Dir)
	}
	if d.Rule != nil && len(d.Findings) > 0 {
		// A longer rule covers more arguments (an exact rule covers them
		// all): the longest matching rule has the fewest findings.
		if long := s.matchBy(q.Argv, q.Provider, q.ProjectRoot, true); long.Rule != d.Rule {
			d.Rule, d.Findings = long.Rule, Guard(q.Argv, len(long.Rule.Tokens), q.Dir)
		}
	}
	d.Allowed = d.Rule != nil && len(d.Findings) == 0
	return d
}

// Describe names the rule with its provenance for a person, its tokens in
// display form (as the approval card shows commands) and control or
// invisible characters in the file name escaped:
// rule «git status» (global, /home/a/.config/agentgate/allow.list:3).
func (r *Rule) Describe() string { return r.DescribeAt(display.Text(r.File)) }

// DescribeAt is Describe with the rule's file written as file, which the
// caller has made fit to show (escaped, or relative to the home directory
// on a card).
func (r *Rule) DescribeAt(file string) string {
	scope := string(r.Scope)
	if r.Scope == ScopeProvider && r.Provider != "" {
		scope += " " + display.Text(r.Provider)
	}
	return fmt.Sprintf("rule «%s» (%s, %s:%d)", display.Command(r.Tokens), scope, file, r.Line)
}

// Explain says, for a person or an agent, what d means for argv: "allowed
// by rule «…» (…)", "rule «…» (…) matches, but the argument guard stopped
// it: FINDINGS", or "no allow-list rule matches ARGV", followed by the
// findings when there are any.
func (d Decision) Explain(argv []string) string {
	switch {
	case d.Allowed && d.Rule != nil:
		return "allowed by " + d.Rule.Describe()
	case d.Rule != nil:
		return d.Rule.Describe() + " matches, but the argument guard stopped it: " + FindingsText(d.Findings)
	case len(d.Findings) > 0:
		return "no allow-list rule matches " + display.Command(argv) + "; the argument guard notes: " + FindingsText(d.Findings)
	}
	return "no allow-list rule matches " + display.Command(argv)
}

// match returns the broadest active rule for argv (Decide without the
// guard).
func (s *Store) match(argv []string, provider, projectRoot string) Decision {
	return s.matchBy(argv, provider, projectRoot, false)
}

// matchBy returns the broadest active rule for argv, or with longest the
// longest (the one covering most of argv; on a tie, the same scope order).
func (s *Store) matchBy(argv []string, provider, projectRoot string, longest bool) Decision {
	if len(argv) == 0 {
		return Decision{}
	}
	best := s.snap.Load().global.trie.match(argv, longest)
	consider := func(ls *listState) {
		if ls == nil {
			return
		}
		r := ls.trie.match(argv, longest)
		if r != nil && (best == nil || (!longest && len(r.Tokens) < len(best.Tokens)) || (longest && len(r.Tokens) > len(best.Tokens))) {
			best = r
		}
	}
	if provider != "" {
		consider(s.providerList(provider))
	}
	if projectRoot != "" {
		consider(s.projectList(projectRoot))
	}
	return Decision{Allowed: best != nil, Rule: best}
}

// list returns the state of one scope's list, reading it on first use.
func (s *Store) list(scope Scope, provider, projectRoot string) (*listState, error) {
	if _, err := s.FileFor(scope, provider, projectRoot); err != nil {
		return nil, err
	}
	switch scope {
	case ScopeProvider:
		return s.providerList(provider), nil
	case ScopeProject:
		return s.projectList(projectRoot), nil
	}
	return s.snap.Load().global, nil
}

// Rules returns the rules of one scope's list in line order (project rules
// with Active telling whether they are confirmed), its malformed lines, and
// an error when the scope is unknown, the provider name invalid, the project
// root not absolute, or the file could not be read. provider is used only for
// ScopeProvider and projectRoot only for ScopeProject.
func (s *Store) Rules(scope Scope, provider, projectRoot string) ([]Rule, []ParseError, error) {
	ls, err := s.list(scope, provider, projectRoot)
	if err != nil {
		return nil, nil, err
	}
	return slices.Clone(ls.rules), slices.Clone(ls.errs), ls.readErr
}

// Untrusted returns the rules of the project at projectRoot that no person
// has confirmed: they were added or changed outside agentgate and allow
// nothing until confirmed with Trust or TrustRules. The UI shows them as
// "N rules changed outside agentgate".
func (s *Store) Untrusted(projectRoot string) ([]Rule, error) {
	rules, _, err := s.Rules(ScopeProject, "", projectRoot)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(rules, func(r Rule) bool { return r.Active }), nil
}

// Trust records that a person confirmed every rule the project's file holds
// now, read afresh from disk. Between showing the person the untrusted rules
// and calling Trust, the file may change again; TrustRules confirms only the
// rules that were shown and is the safer call for a UI.
func (s *Store) Trust(projectRoot string) error {
	key, ok := cleanRoot(projectRoot)
	if !ok {
		return fmt.Errorf("project root %q is not an absolute path", projectRoot)
	}
	file := ProjectFile(key)
	content, err := atomicfile.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading allow-list %s to confirm it: %w", file, err)
	}
	parsed, _ := parseListFile(content)
	tokens := make([][]string, len(parsed))
	for i, pl := range parsed {
		tokens[i] = pl.tokens
	}
	return s.TrustRules(key, tokens)
}

// TrustRules records that a person confirmed the given project rules (each
// a token list, e.g. the Tokens of the rules Untrusted returned and the
// person saw). Rules already confirmed stay confirmed.
func (s *Store) TrustRules(projectRoot string, rules [][]string) error {
	key, ok := cleanRoot(projectRoot)
	if !ok {
		return fmt.Errorf("project root %q is not an absolute path", projectRoot)
	}
	err := updateTrust(s.paths, key, func(hashes map[string]bool) {
		for _, tokens := range rules {
			hashes[ruleHash(tokens)] = true
		}
	})
	if err != nil {
		return err
	}
	return s.reloadTrust()
}

// FileFor returns the allow-list file of a scope: Paths.GlobalFile,
// Paths.ProviderFile(provider) or ProjectFile(projectRoot). It fails for an
// unknown scope, an invalid provider name or a relative project root.
func (s *Store) FileFor(scope Scope, provider, projectRoot string) (string, error) {
	switch scope {
	case ScopeGlobal:
		return s.paths.GlobalFile(), nil
	case ScopeProvider:
		return s.paths.ProviderFile(provider)
	case ScopeProject:
		key, ok := cleanRoot(projectRoot)
		if !ok {
			return "", fmt.Errorf("project root %q is not an absolute path: pass the result of ProjectRoot", projectRoot)
		}
		return ProjectFile(key), nil
	}
	return "", fmt.Errorf("unknown allow-list scope %q: use global, provider or project", scope)
}

// RuleLineFor returns the allow-list line that allows exactly argv (and
// anything argv is a prefix of): FormatList(argv).
func (s *Store) RuleLineFor(argv []string) string {
	return FormatList(argv)
}

// validateRuleTokens checks tokens before they are written as a rule.
func validateRuleTokens(tokens []string) error {
	if len(tokens) == 0 {
		return errors.New("a rule needs at least one token: the program to allow")
	}
	if tokens[0] == "" {
		return errors.New("a rule's first token (the program) is empty: no command can start with it")
	}
	for i, t := range tokens {
		if strings.IndexByte(t, 0) >= 0 {
			return fmt.Errorf("token %d of the rule (%q) contains a NUL byte, which no command argument can hold", i, t)
		}
	}
	return nil
}

// Add writes a rule allowing tokens into the list of scope (provider is used
// only for ScopeProvider, projectRoot only for ScopeProject), creating the
// directory (mode 0700) and file (0600) when missing, and returns the rule as
// now stored. The edit appends one line and keeps every other byte of the
// file; when a line with the same tokens exists, nothing is written and that
// rule is returned. Add is how a person changes a list through agentgate, so
// in a project the rule is confirmed (trusted) at once; other outside changes
// stay unconfirmed.
func (s *Store) Add(scope Scope, provider, projectRoot string, tokens []string) (Rule, error) {
	if err := validateRuleTokens(tokens); err != nil {
		return Rule{}, err
	}
	tokens = slices.Clone(tokens)
	file, err := s.FileFor(scope, provider, projectRoot)
	if err != nil {
		return Rule{}, err
	}
	line := FormatList(tokens)
	err = s.edit(scope, projectRoot, file, func(content []byte) ([]byte, error) {
		if containsRule(content, tokens) {
			return content, nil
		}
		return appendRuleLine(content, line), nil
	})
	if err != nil {
		return Rule{}, err
	}
	if scope == ScopeProject {
		key, _ := cleanRoot(projectRoot)
		if err := updateTrust(s.paths, key, func(h map[string]bool) { h[ruleHash(tokens)] = true }); err != nil {
			return Rule{}, fmt.Errorf("the rule was written to %s but confirming it failed, so it stays inactive: %w", file, err)
		}
		if err := s.reloadTrust(); err != nil {
			return Rule{}, err
		}
	} else {
		s.reloadList(scope, provider, projectRoot)
	}
	ls, err := s.list(scope, provider, projectRoot)
	if err != nil {
		return Rule{}, err
	}
	for _, r := range ls.rules {
		if slices.Equal(r.Tokens, tokens) {
			return r, nil
		}
	}
	return Rule{}, fmt.Errorf("the rule %s was written to %s but is gone on reading it back: another program changed the file at the same time; check it and add the rule again", line, file)
}

// Remove deletes every line of scope's list whose tokens equal tokens,
// keeping every other byte of the file. It fails, changing nothing, when no
// such line exists. In a project the rule's confirmation is withdrawn too, so
// the same rule written back later by someone else is not active.
func (s *Store) Remove(scope Scope, provider, projectRoot string, tokens []string) error {
	file, err := s.FileFor(scope, provider, projectRoot)
	if err != nil {
		return err
	}
	err = s.edit(scope, projectRoot, file, func(content []byte) ([]byte, error) {
		out, removed := removeRuleLines(content, tokens)
		if removed == 0 {
			return nil, fmt.Errorf("%s has no rule %s: nothing removed (list the rules to see their exact tokens)", file, FormatList(tokens))
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	if scope == ScopeProject {
		key, _ := cleanRoot(projectRoot)
		if err := updateTrust(s.paths, key, func(h map[string]bool) { delete(h, ruleHash(tokens)) }); err != nil {
			return fmt.Errorf("the rule was removed from %s but withdrawing its confirmation failed: %w", file, err)
		}
		return s.reloadTrust()
	}
	s.reloadList(scope, provider, projectRoot)
	return nil
}

// edit changes scope's list file by transform: a project list beneath its
// project directory by descriptor (editProjectList), the person's own lists
// by path (editFile).
func (s *Store) edit(scope Scope, projectRoot, file string, transform func(content []byte) ([]byte, error)) error {
	if scope == ScopeProject {
		key, _ := cleanRoot(projectRoot)
		return editProjectList(key, transform)
	}
	return editFile(file, transform)
}

// reloadList re-reads one list into a new snapshot.
func (s *Store) reloadList(scope Scope, provider, projectRoot string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.snap.Load().clone()
	next.reload(s, scope, provider, projectRoot)
	s.publishLocked(next)
}

// reload re-reads one list into snap, which must be unpublished.
func (snap *snapshot) reload(s *Store, scope Scope, provider, projectRoot string) {
	switch scope {
	case ScopeGlobal:
		snap.global = s.loadList(ScopeGlobal, "", "", nil)
	case ScopeProvider:
		snap.providers[provider] = s.loadList(ScopeProvider, provider, "", nil)
	case ScopeProject:
		key, _ := cleanRoot(projectRoot)
		snap.projects[key] = s.loadList(ScopeProject, "", key, snap.trust)
	}
}

// reloadTrust re-reads trust.json and every loaded project list. When
// trust.json cannot be read, nothing is trusted and the error is returned.
func (s *Store) reloadTrust() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.snap.Load().clone()
	err := next.reloadTrust(s)
	s.publishLocked(next)
	return err
}

// reloadTrust re-reads trust.json and the project lists into snap, which must
// be unpublished.
func (snap *snapshot) reloadTrust(s *Store) error {
	trust, err := readTrust(s.paths)
	if err != nil {
		trust = trustSet{}
	}
	snap.trust = trust
	for root := range snap.projects {
		snap.reload(s, ScopeProject, "", root)
	}
	return err
}

// lockBeside takes the cross-process lock file path+".lock" (mode 0600) and
// returns the function that releases it.
func lockBeside(path string) (func(), error) {
	lock := flock.New(path+lockSuffix, flock.SetPermissions(0o600))
	if err := lock.Lock(); err != nil {
		return nil, fmt.Errorf("locking %s for editing: %w", path+lockSuffix, err)
	}
	return func() { lock.Unlock(); lock.Close() }, nil
}
