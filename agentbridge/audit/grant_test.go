package audit

import (
	"testing"
	"time"

	"github.com/agentgate/agentgate/prefs"
)

func TestGrantString(t *testing.T) {
	given := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		m    prefs.GrantMatch
		want string
	}{
		{prefs.GrantMatch{Grant: prefs.Grant{ID: "g-0123abcd", Kind: prefs.GrantExact, Tokens: []string{"git", "status"}, By: "card", Given: given, Expires: given.Add(time.Hour)}, Left: 12 * time.Minute},
			"grant g-0123abcd (exact command «git status», given on the card), 12 min left"},
		{prefs.GrantMatch{Grant: prefs.Grant{ID: "g-1", Kind: prefs.GrantProgram, Tokens: []string{"ls"}, By: "terminal", Given: given, Expires: given.Add(time.Hour)}, Left: 59*time.Minute + 30*time.Second},
			"grant g-1 (program «ls», given at the terminal), 59 min 30 s left"},
		{prefs.GrantMatch{Grant: prefs.Grant{ID: "g-2", Kind: prefs.GrantExact, Tokens: []string{"printf", "\x1b[2J", "a b"}, By: "card", Given: given, Instance: "abc"}},
			`grant g-2 (exact command «printf $'\x1b[2J' 'a b'», given on the card), until agentgate quits`},
	} {
		if got := GrantOf(c.m).String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
