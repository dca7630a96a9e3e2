package prefs

import (
	"path/filepath"
	"slices"
	"time"
)

// PastCommand is one command from the audit log, as the rule preview needs
// it.
type PastCommand struct {
	// Argv is the command as proposed.
	Argv []string
	// Provider is who proposed it; empty when unknown.
	Provider string
	// Project is the project root it was proposed in.
	Project string
	// Time is when it was proposed.
	Time time.Time
}

// Preview says what a candidate rule would have allowed.
type Preview struct {
	// Matched holds the newest matching commands, newest first, at most
	// MaxPreviewMatches of them.
	Matched []PastCommand
	// Total is how many past commands match, including those not in Matched.
	Total int
}

// MaxPreviewMatches caps Preview.Matched so a broad rule over a long log stays
// cheap to show.
const MaxPreviewMatches = 100

// PreviewRule returns which of past the candidate rule would have allowed:
// those whose Argv starts with candidate.Tokens (compared exactly, as Decide
// does) and that the rule's scope covers: every command for ScopeGlobal,
// commands whose Provider equals candidate.Provider for ScopeProvider, and
// commands whose Project equals candidate.Project (both cleaned) for
// ScopeProject. A candidate without tokens matches nothing. past is not
// modified.
func PreviewRule(candidate Rule, past []PastCommand) Preview {
	var p Preview
	if len(candidate.Tokens) == 0 {
		return p
	}
	project := filepath.Clean(candidate.Project)
	for _, pc := range past {
		switch candidate.Scope {
		case ScopeGlobal:
		case ScopeProvider:
			if pc.Provider != candidate.Provider {
				continue
			}
		case ScopeProject:
			if pc.Project == "" || filepath.Clean(pc.Project) != project {
				continue
			}
		default:
			continue
		}
		if len(pc.Argv) < len(candidate.Tokens) || !slices.Equal(pc.Argv[:len(candidate.Tokens)], candidate.Tokens) {
			continue
		}
		p.Total++
		p.Matched = append(p.Matched, pc)
	}
	slices.SortStableFunc(p.Matched, func(a, b PastCommand) int { return b.Time.Compare(a.Time) })
	if len(p.Matched) > MaxPreviewMatches {
		p.Matched = p.Matched[:MaxPreviewMatches]
	}
	return p
}
