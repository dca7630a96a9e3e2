package model

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"
)

// GrantGiver records temporary grants; *prefs.Grants implements it.
type GrantGiver interface {
	// Give records a grant (see prefs.Grants.Give).
	Give(req prefs.GrantRequest) (prefs.Grant, error)
}

// GrantLength is how long a grant given on the card lasts.
type GrantLength struct {
	// Label names the length on the card: "15 minutes".
	Label string
	// For is how long a timed grant lasts; 0 with UntilQuit.
	For time.Duration
	// UntilQuit makes the grant last until this agentgate quits.
	UntilQuit bool
}

// The card's grant lengths.
var (
	// For15Minutes is a grant for 15 minutes.
	For15Minutes = GrantLength{Label: "15 minutes", For: 15 * time.Minute}
	// ForOneHour is a grant for 1 hour.
	ForOneHour = GrantLength{Label: "1 hour", For: time.Hour}
	// UntilQuit is a grant until agentgate quits.
	UntilQuit = GrantLength{Label: "until agentgate quits", UntilQuit: true}
)

// GrantLengths returns the lengths the card offers: 15 minutes, 1 hour and,
// when the card knows its app instance (CardModel.Instance), until
// agentgate quits; none without a GrantGiver.
func (m *CardModel) GrantLengths() []GrantLength {
	if m.Grants == nil {
		return nil
	}
	if m.Instance == "" {
		return []GrantLength{For15Minutes, ForOneHour}
	}
	return []GrantLength{For15Minutes, ForOneHour, UntilQuit}
}

// GrantWarning returns why kind cannot be granted for req ("" when it
// can): the program of a launcher or interpreter is never granted, only
// its exact command, since the program would allow anything.
func GrantWarning(req *agentbridge.ApprovalRequest, kind AllowKind) string {
	if kind != AllowProgram || len(req.Command.Argv) == 0 || !prefs.IsLauncher(req.Command.Argv[0]) {
		return ""
	}
	return fmt.Sprintf("%s runs other programs or code, so only the exact command can be allowed for a while: %s",
		display.Word(req.Command.Argv[0]), display.Command(req.Command.Argv))
}

// GrantText says what a grant of kind for req allows, where, for whom and
// how long: "exactly git status (/usr/bin/git) in Project «app», for
// claude-code only, for 15 minutes".
func GrantText(req *agentbridge.ApprovalRequest, kind AllowKind, length GrantLength) string {
	what := "the program " + display.Word(req.Command.Argv[0]) + " with any arguments"
	if kind == AllowExact {
		what = "exactly " + display.Command(req.Command.Argv)
	}
	who := "for proposals without a provider only"
	if req.Provider != "" {
		who = "for " + EscapeText(req.Provider) + " only"
	}
	how := "for " + length.Label
	if length.UntilQuit {
		how = length.Label
	}
	return fmt.Sprintf("%s (%s) in %s, %s, %s", what, DisplayPath(req.Command.Executable),
		ScopeRef{Scope: prefs.ScopeProject, Project: req.ProjectRoot}.Name(), who, how)
}

// AllowFor gives a temporary grant of kind for the shown proposal and
// approves it: bound to the proposal's project, its provider and the
// executable its program resolved to (path and file identity), lasting
// length. When the grant
// cannot be given (a launcher's program, no grants kept here) nothing is
// approved and the error says why. Errors otherwise as for Approve.
func (m *CardModel) AllowFor(kind AllowKind, length GrantLength) error {
	req, err := m.armedRequest()
	if err != nil {
		return err
	}
	if req.ThroughAgentShell || len(req.Command.Argv) == 0 {
		return errors.New("a command that runs through the agent's shell cannot be allowed for a while; approve or deny it")
	}
	if m.Grants == nil || length.UntilQuit && m.Instance == "" {
		return errors.New("this agentgate keeps no temporary grants; approve once or add a rule")
	}
	if w := GrantWarning(req, kind); w != "" {
		return errors.New(w)
	}
	gr := prefs.GrantRequest{Kind: prefs.GrantProgram, Argv: req.Command.Argv, Executable: req.Command.Executable, ProgramID: req.Command.ProgramID,
		Project: req.ProjectRoot, Provider: req.Provider, By: "card", For: length.For}
	if kind == AllowExact {
		gr.Kind = prefs.GrantExact
	}
	if length.UntilQuit {
		gr.Instance = m.Instance
	}
	g, err := m.Grants.Give(gr)
	if err != nil {
		return fmt.Errorf("the grant was not given, so the command was not approved: %w", err)
	}
	return m.Queue.Answer(req.ID, agentbridge.Answer{Approved: true, By: "card",
		Message: fmt.Sprintf("allowed by a temporary grant (%s): %s", g.ID, GrantText(req, kind, length))})
}
