package audit

import (
	"fmt"
	"time"

	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"
)

// GrantOf returns the audit form of the grant that allowed a command.
func GrantOf(m prefs.GrantMatch) *Grant {
	g := m.Grant
	return &Grant{ID: g.ID, Kind: string(g.Kind), Text: g.Text(), By: g.By, UntilQuit: g.UntilQuit(), LeftMS: m.Left.Milliseconds()}
}

// String names the grant for a person, as the hook's answer and `agentgate
// log` show it: grant g-1a2b3c4d (exact command «git status», given on the
// card), 12 min left — or "…, until agentgate quits". The command is in
// display form (display.Command), so control and invisible characters are
// escaped.
func (g *Grant) String() string {
	command := display.Word(g.Text)
	if tokens, err := prefs.ParseList(g.Text); err == nil {
		command = display.Command(tokens)
	}
	what := "program"
	if g.Kind == string(prefs.GrantExact) {
		what = "exact command"
	}
	where := "given on the card"
	if g.By == "terminal" {
		where = "given at the terminal"
	}
	left := display.Duration(time.Duration(g.LeftMS)*time.Millisecond) + " left"
	if g.UntilQuit {
		left = "until agentgate quits"
	}
	return fmt.Sprintf("grant %s (%s «%s», %s), %s", display.Word(g.ID), what, command, where, left)
}
