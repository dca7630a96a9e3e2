package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentgate/agentgate/agentbridge/audit"
)

func TestAllowListStats(t *testing.T) {
	s := newCLISandbox(t, "git\ngit status\nmake test\n")
	log, err := audit.Open(audit.Path(s.paths.StateDir), audit.Options{Host: "app"})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	now := time.Now()
	rule := &audit.Rule{Text: "git", Scope: "global", File: s.paths.GlobalFile(), Line: 1}
	for i, argv := range [][]string{{"git", "log"}, {"git", "diff", "--stat"}} {
		at := now.Add(time.Duration(i-2) * time.Hour)
		if err := log.Append(audit.Entry{Time: at, Kind: audit.KindDecision, Decision: audit.DecisionRule, Argv: argv, Rule: rule}); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	e := s.env(&out, &errOut)
	if code := dispatch([]string{"allow", "list", "--stats"}, e); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	text := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`LINE +USES +LAST USED +RULE`),
		regexp.MustCompile(`\n +1 +2 +\d{4}-\d\d-\d\d \d\d:\d\d +git +git diff --stat\n`),
		regexp.MustCompile(`\n +2 +0 +- +git status +\[redundant: covered by «git» \(allow.list:1\)\]\n`),
		regexp.MustCompile(`\n +3 +0 +- +make test *\n`),
	} {
		if !want.MatchString(text) {
			t.Errorf("allow list --stats lacks %s:\n%s", want, text)
		}
	}
	// Without --stats the list is as before.
	out.Reset()
	if code := dispatch([]string{"allow", "list"}, e); code != exitOK || strings.Contains(out.String(), "USES") {
		t.Errorf("allow list: exit %d\n%s", code, out.String())
	}
}
