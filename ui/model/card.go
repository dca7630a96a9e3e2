package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"
)

// ArmDelay is how long the card's buttons stay inert after a card appears
// or its content changes, so a key or click meant for another window
// approves nothing.
const ArmDelay = time.Second

// ErrNotArmed is returned by the card's actions while the card is inert
// (within ArmDelay of its content appearing or changing) or hidden.
var ErrNotArmed = errors.New("the card has just appeared or changed: its buttons are inert for a moment so nothing is approved by accident")

// ErrNothingPending is returned by the card's actions when no proposal waits.
var ErrNothingPending = errors.New("no proposal is waiting")

// RuleAdder writes allow-list rules; *prefs.Store implements it.
type RuleAdder interface {
	// Add writes a rule allowing tokens into scope's list (see prefs.Store.Add).
	Add(scope prefs.Scope, provider, projectRoot string, tokens []string) (prefs.Rule, error)
}

// CardModel is the approval card without the window: which proposal it
// shows, whether its buttons are live, and what each button does. Time
// comes from Now so tests control the arming delay. Safe for concurrent use.
type CardModel struct {
	// Queue is the proposals the card pages through.
	Queue *Queue
	// Rules receives "Always allow" rules.
	Rules RuleAdder
	// Grants receives temporary grants ("for 15 minutes"…); nil offers none.
	Grants GrantGiver
	// Instance is the app instance "until agentgate quits" grants belong to
	// (prefs.Instance.ID); "" does not offer that length.
	Instance string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time

	// mu guards the fields below.
	mu sync.Mutex
	// shownID is the id of the proposal the card last showed ("" none).
	shownID string
	// shownPos and shownTotal are the position shown with it ("2 of 5").
	shownPos, shownTotal int
	// armedAt is when the buttons become live.
	armedAt time.Time
	// hidden is true after Esc, until a new proposal arrives or Show.
	hidden bool
}

// now returns the model's current time.
func (m *CardModel) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Sync reads the queue's current proposal and re-arms the card when what it
// shows changed: another proposal, or a different position or count ("2 of
// 5" → "2 of 4"). It returns the proposal shown (nil when none) and whether
// the content changed. A newly arrived proposal un-hides the card only when
// the card shows nothing yet; a hidden card stays hidden otherwise.
func (m *CardModel) Sync() (req *agentbridge.ApprovalRequest, changed bool) {
	req, pos, total := m.Queue.Current()
	id := ""
	if req != nil {
		id = req.ID
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == m.shownID && pos == m.shownPos && total == m.shownTotal {
		return req, false
	}
	if m.shownID == "" && id != "" {
		m.hidden = false
	}
	m.shownID, m.shownPos, m.shownTotal = id, pos, total
	m.armedAt = m.now().Add(ArmDelay)
	return req, true
}

// Armed reports whether the buttons are live: a proposal is shown, the card
// is not hidden, and ArmDelay has passed since its content last changed.
func (m *CardModel) Armed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.shownID != "" && !m.hidden && !m.now().Before(m.armedAt)
}

// ArmsIn returns how long until the buttons are live (0 when they are).
func (m *CardModel) ArmsIn() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return max(m.armedAt.Sub(m.now()), 0)
}

// Hide is Esc: the card goes away and the proposal stays pending.
func (m *CardModel) Hide() {
	m.mu.Lock()
	m.hidden = true
	m.mu.Unlock()
}

// Show brings a hidden card back (from the tray or the Processes window);
// the buttons re-arm, as for a card that just appeared.
func (m *CardModel) Show() {
	m.mu.Lock()
	m.hidden = false
	m.mu.Unlock()
	m.Rearm()
}

// Rearm makes the buttons inert for ArmDelay from now: the card's content
// changed in place (the "Always allow" panel opened).
func (m *CardModel) Rearm() {
	m.mu.Lock()
	m.armedAt = m.now().Add(ArmDelay)
	m.mu.Unlock()
}

// Hidden reports whether the person hid the card with Esc.
func (m *CardModel) Hidden() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hidden
}

// armedRequest returns the proposal the card shows, if the card is armed.
func (m *CardModel) armedRequest() (*agentbridge.ApprovalRequest, error) {
	m.mu.Lock()
	id := m.shownID
	m.mu.Unlock()
	if id == "" {
		return nil, ErrNothingPending
	}
	if !m.Armed() {
		return nil, ErrNotArmed
	}
	req, _, _ := m.Queue.Current()
	if req == nil || req.ID != id {
		// The queue moved since the card was drawn: the person has not seen it.
		return nil, ErrNotArmed
	}
	return req, nil
}

// Approve approves the shown proposal. It returns ErrNotArmed while the
// card is inert and ErrAnswered when the proposal left meanwhile.
func (m *CardModel) Approve() error {
	req, err := m.armedRequest()
	if err != nil {
		return err
	}
	return m.Queue.Answer(req.ID, agentbridge.Answer{Approved: true, By: "card"})
}

// ApproveWithoutWriteConfinement approves the shown proposal for this one
// run without write confinement: it may write anywhere the person can;
// its scoping, network setting and lifetime bounds still hold. The card
// offers it only when the run's writes would be confined
// (OffersUnconfinedOnce); otherwise, and for a hook request, it refuses.
// Errors otherwise as for Approve.
func (m *CardModel) ApproveWithoutWriteConfinement() error {
	req, err := m.armedRequest()
	if err != nil {
		return err
	}
	if !OffersUnconfinedOnce(req) {
		return errors.New("this run's writes are not confined anyway; approve it with Approve")
	}
	return m.Queue.Answer(req.ID, agentbridge.Answer{Approved: true, By: "card", WithoutWriteConfinement: true})
}

// OffersUnconfinedOnce reports whether the card offers to approve req
// without write confinement: a command agentgate runs (not a hook
// request) whose writes would be confined.
func OffersUnconfinedOnce(req *agentbridge.ApprovalRequest) bool {
	return !req.ThroughAgentShell && len(req.Command.Argv) > 0 && req.Confinement.Unconfined == "" && len(req.Confinement.Writes) > 0
}

// Deny denies the shown proposal; message (trimmed, may be empty) goes to
// the agent. Errors as for Approve.
func (m *CardModel) Deny(message string) error {
	req, err := m.armedRequest()
	if err != nil {
		return err
	}
	return m.Queue.Answer(req.ID, agentbridge.Answer{Approved: false, Message: strings.TrimSpace(message), By: "card"})
}

// AlwaysAllow writes choice's rule for the shown proposal and approves it.
// When writing the rule fails nothing is approved and the error says why.
// Errors otherwise as for Approve.
func (m *CardModel) AlwaysAllow(choice AllowChoice) error {
	req, err := m.armedRequest()
	if err != nil {
		return err
	}
	if req.ThroughAgentShell || len(req.Command.Argv) == 0 {
		return errors.New("a command that runs through the agent's shell cannot be allowed by a rule; approve or deny it")
	}
	if _, err := m.Rules.Add(choice.Scope, choice.Provider, choice.Project, choice.Tokens(req)); err != nil {
		return fmt.Errorf("the rule was not saved, so the command was not approved: %w", err)
	}
	return m.Queue.Answer(req.ID, agentbridge.Answer{Approved: true, Message: "allowed by a new rule: " + choice.Label(req), By: "card"})
}

// CardContent is the text of the approval card for one proposal. Every
// field is ready to show: agent-supplied text is escaped with EscapeText
// and the command with display.Command.
type CardContent struct {
	// Position is "2 of 5" (or "1 of 1").
	Position string
	// From names the proposer: provider, client and peer process.
	From string
	// Command is the display form of argv (or the agent's shell line).
	Command string
	// ThroughShell is a warning for hook requests, "" otherwise.
	ThroughShell string
	// Protected warns that earlier runs in this project changed files that
	// steer agents and tools (ProtectedText), "" when none did.
	Protected string
	// Guard says what the argument guard found (GuardText), "" when
	// nothing.
	Guard string
	// Escaped warns that the command holds characters shown escaped
	// (EscapedWarning) and is "" when it holds none.
	Escaped string
	// Executable is the program's path, and "→ the file it resolves to"
	// when symlinks lead elsewhere ("" for hook requests).
	Executable string
	// Confinement says what the run may write and its network
	// ("writes: project, temp, cache"), or that its writes are not
	// confined and why; "" for hook requests.
	Confinement string
	// Cwd is the working directory relative to the project, with the project.
	Cwd string
	// Timeout is the run's bound, e.g. "2 min".
	Timeout string
	// Stdin is "none" or the size of the input fed to the command.
	Stdin string
	// Reason is the agent's explanation ("" when none), escaped.
	Reason string
	// ExpiresIn is the time left before the proposal expires.
	ExpiresIn string
}

// ContentOf returns the card's text for req shown at pos of total at now.
func ContentOf(req *agentbridge.ApprovalRequest, pos, total int, now time.Time) CardContent {
	c := CardContent{
		Position:  fmt.Sprintf("%d of %d", pos, total),
		From:      fromText(req),
		Reason:    EscapeText(req.Reason),
		ExpiresIn: display.Duration(req.Expires.Sub(now)),
		Guard:     GuardText(req),
		Protected: ProtectedText(req),
	}
	if req.ThroughAgentShell {
		// A shell line's newlines and tabs are shown as \n and \t, never
		// as line breaks: twelve newlines must not push `curl … | sh` out
		// of sight below `git status`.
		c.Command = display.Text(req.CommandLine)
		if hasEscapes(req.CommandLine) {
			c.Escaped = EscapedWarning
		}
		c.ThroughShell = "Runs through the agent's own shell: agentgate only decides, it cannot bound or stop this command."
		c.Cwd = EscapeText(req.Cwd)
		c.Timeout, c.Stdin, c.Executable, c.Confinement = "set by the agent", "—", "—", "—"
		return c
	}
	cmd := req.Command
	c.Command = display.Command(cmd.Argv)
	c.Executable = display.Word(cmd.Executable)
	if cmd.ExecutableResolved != "" && cmd.ExecutableResolved != cmd.Executable {
		c.Executable += " → " + display.Word(cmd.ExecutableResolved)
	}
	c.Confinement = display.Text(req.Confinement.Summary())
	rel := cmd.DirRel
	if rel == "" {
		rel = "."
	}
	c.Cwd = display.Word(rel) + " in " + DisplayPath(cmd.ProjectRoot)
	for _, arg := range cmd.Argv {
		if hasEscapes(arg) {
			c.Escaped = EscapedWarning
			break
		}
	}
	c.Timeout = display.Duration(cmd.Timeout)
	c.Stdin = "none"
	if n := len(cmd.Stdin); n > 0 {
		c.Stdin = FormatBytes(int64(n))
	}
	return c
}

// ProtectedText is the card's warning that earlier runs in req's project
// changed files that steer agents and tools (ApprovalRequest.
// ProtectedChanged, one line per run), or "" when none did.
func ProtectedText(req *agentbridge.ApprovalRequest) string {
	if len(req.ProtectedChanged) == 0 {
		return ""
	}
	return "⚠ Earlier runs in this project changed files that steer agents and tools; look at them before you answer:\n  " +
		strings.Join(req.ProtectedChanged, "\n  ")
}

// GuardText says, for the card, what the argument guard found in req's
// command: the rule that matched and would have allowed it, and each
// finding on its own line ("• --output=/tmp/x (argument 2): writes the
// diff to a file anywhere"); "" when there are no findings.
func GuardText(req *agentbridge.ApprovalRequest) string {
	if len(req.Findings) == 0 {
		return ""
	}
	var b strings.Builder
	if req.MatchedRule != nil {
		b.WriteString("The " + req.MatchedRule.DescribeAt(DisplayPath(req.MatchedRule.File)) + " matches, but it does not allow these arguments:")
	} else {
		b.WriteString("Note what this command does:")
	}
	for _, f := range req.Findings {
		b.WriteString("\n• " + f.String())
	}
	return b.String()
}

// EscapedWarning is the card's warning for a command holding characters a
// person could not see or that reorder what they see: control, invisible
// and bidirectional-override characters, and bytes that are not UTF-8 (the
// card shows it beside a warning icon).
const EscapedWarning = "This command contains invisible, control or direction-changing characters; they are shown escaped (\\u…, \\x…). Read it carefully."

// hasEscapes reports whether s holds a character the display form escapes
// (display.NeedsEscape) or a byte that is not UTF-8.
func hasEscapes(s string) bool {
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 || display.NeedsEscape(r) {
			return true
		}
		s = s[size:]
	}
	return false
}

// fromText says who proposes: "claude-code · Claude Code · pid 42 (/usr/bin/node)".
func fromText(req *agentbridge.ApprovalRequest) string {
	var parts []string
	if req.Provider != "" {
		parts = append(parts, EscapeText(req.Provider))
	} else {
		parts = append(parts, "no provider")
	}
	if req.Client != "" {
		parts = append(parts, EscapeText(req.Client))
	}
	if req.PeerPID > 0 {
		p := fmt.Sprintf("pid %d", req.PeerPID)
		if req.PeerExe != "" {
			p += " (" + DisplayPath(req.PeerExe) + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " · ")
}

// EscapeText returns agent-supplied prose with every character that
// display.NeedsEscape flags shown as a visible escape (\n for a newline is
// kept as a line break, since prose has lines; \t becomes a space).
func EscapeText(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteByte(' ')
		case !display.NeedsEscape(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		s = s[size:]
	}
	return b.String()
}

// FormatBytes renders n bytes: "512 B", "1.5 KiB", "3.0 MiB".
func FormatBytes(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// AllowKind says how much of a command an "Always allow" rule covers.
type AllowKind int

// The two kinds of "Always allow" rule.
const (
	// AllowProgram allows argv[0] with any arguments (the default).
	AllowProgram AllowKind = iota
	// AllowExact allows exactly this argv (and longer argvs it prefixes).
	AllowExact
)

// AllowChoice is one entry of the "Always allow ▾" menu: what to allow and
// into which scope's file.
type AllowChoice struct {
	// Kind is program or exact command.
	Kind AllowKind
	// Scope is the allow-list the rule goes into.
	Scope prefs.Scope
	// Provider is the proposer's provider (ScopeProvider only).
	Provider string
	// Project is the session's project root (ScopeProject only).
	Project string
}

// Tokens returns the rule's tokens for req: argv[:1] or the whole argv.
func (c AllowChoice) Tokens(req *agentbridge.ApprovalRequest) []string {
	if c.Kind == AllowProgram && len(req.Command.Argv) > 0 {
		return []string{req.Command.Argv[0]}
	}
	return append([]string(nil), req.Command.Argv...)
}

// Rule returns the candidate rule (tokens and scope) for the rule preview.
func (c AllowChoice) Rule(req *agentbridge.ApprovalRequest) prefs.Rule {
	return prefs.Rule{Tokens: c.Tokens(req), Scope: c.Scope, Provider: c.Provider, Project: c.Project}
}

// ScopeLabel names the scope for a person: "Global", "Provider «claude»",
// "Project «myrepo»".
func (c AllowChoice) ScopeLabel() string {
	return ScopeRef{Scope: c.Scope, Provider: c.Provider, Project: c.Project}.Name()
}

// Label names the choice: "program git into Global", "exact command git
// status into Project «myrepo»".
func (c AllowChoice) Label(req *agentbridge.ApprovalRequest) string {
	what := "program " + display.Command(c.Tokens(req))
	if c.Kind == AllowExact {
		what = "exact command " + display.Command(c.Tokens(req))
	}
	return what + " into " + c.ScopeLabel()
}

// AllowChoices returns the "Always allow" menu for req: for the program
// (first, the default) and then the exact command, each into Global, the
// proposer's Provider (only when it has one) and the Project. For launchers
// and interpreters (prefs.IsLauncher) the exact command comes first, since
// allowing the program allows arbitrary code. A command with argument-guard
// findings gets only the exact command (a rule for the program would not
// allow its arguments), and none at all when a finding is one no rule
// covers (the repository's configuration, sudo). A hook request (through
// the agent's shell) gets none.
func AllowChoices(req *agentbridge.ApprovalRequest) []AllowChoice {
	if req.ThroughAgentShell || len(req.Command.Argv) == 0 {
		return nil
	}
	kinds := []AllowKind{AllowProgram, AllowExact}
	switch {
	case slices.ContainsFunc(req.Findings, func(f prefs.Finding) bool { return f.Arg < 0 }):
		return nil
	case len(req.Findings) > 0:
		kinds = []AllowKind{AllowExact}
	case prefs.IsLauncher(req.Command.Argv[0]):
		kinds = []AllowKind{AllowExact, AllowProgram}
	}
	var out []AllowChoice
	for _, k := range kinds {
		out = append(out, AllowChoice{Kind: k, Scope: prefs.ScopeGlobal})
		if req.Provider != "" {
			out = append(out, AllowChoice{Kind: k, Scope: prefs.ScopeProvider, Provider: req.Provider})
		}
		if req.ProjectRoot != "" {
			out = append(out, AllowChoice{Kind: k, Scope: prefs.ScopeProject, Project: req.ProjectRoot})
		}
	}
	return out
}

// AllowWarning returns the warning for choice c on req, and whether to
// offer switching to the exact command: for a program rule whose program
// is a launcher or interpreter, why that allows arbitrary code
// (prefs.LauncherWarning), offering the exact command; for the exact
// command of a command with argument-guard findings, what it does and that
// the rule lets it run again without asking; "" otherwise.
func AllowWarning(req *agentbridge.ApprovalRequest, c AllowChoice) (warning string, offerExact bool) {
	if len(req.Command.Argv) == 0 {
		return "", false
	}
	if c.Kind == AllowProgram {
		if w := prefs.LauncherWarning(req.Command.Argv[0]); w != "" {
			return w + ": " + display.Command(req.Command.Argv), true
		}
		return "", false
	}
	if len(req.Findings) == 0 {
		return "", false
	}
	var whys []string
	for _, f := range req.Findings {
		if !slices.Contains(whys, f.Why) {
			whys = append(whys, f.Why)
		}
	}
	return "This command " + strings.Join(whys, "; ") + ". The rule lets an agent run exactly this command again, without asking.", false
}

// RuleLine is the allow-list line c writes for req, with control and
// invisible characters shown escaped.
func (c AllowChoice) RuleLine(req *agentbridge.ApprovalRequest) string {
	return display.Text(prefs.FormatList(c.Tokens(req)))
}

// PreviewText is the rule preview: "Would have allowed N of your last M
// commands:" followed by up to show of them (newest first), or a sentence
// saying it would have allowed none. past is the audit log's recent
// commands (see audit.PastCommands).
func PreviewText(rule prefs.Rule, past []prefs.PastCommand, show int) string {
	if len(past) == 0 {
		return "No past commands in the audit log to preview this rule against."
	}
	p := prefs.PreviewRule(rule, past)
	if p.Total == 0 {
		return fmt.Sprintf("Would have allowed none of your last %d commands.", len(past))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Would have allowed %d of your last %d commands:", p.Total, len(past))
	for i, pc := range p.Matched {
		if i == show {
			fmt.Fprintf(&b, "\n… and %d more", p.Total-show)
			break
		}
		b.WriteString("\n  " + display.Command(pc.Argv))
	}
	return b.String()
}
