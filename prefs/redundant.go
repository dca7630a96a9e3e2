package prefs

// walk calls fn with every rule along argv's path in the trie, the
// broadest (fewest tokens) first, until fn returns false.
func (t *trieNode) walk(argv []string, fn func(*Rule) bool) {
	node := t
	for _, token := range argv {
		if node == nil {
			return
		}
		node = node.children[token]
		if node != nil && node.rule != nil && !fn(node.rule) {
			return
		}
	}
}

// CoveringRule returns an active rule that allows everything r allows, so
// that r is redundant; nil when there is none. A rule c covers r when
//
//   - c's list applies wherever r's does: the global list covers every
//     list, a provider's list covers itself, a project's list covers
//     itself (a provider's list never covers a project's, nor the
//     reverse);
//   - c's tokens are a prefix of r's: fewer tokens, or the same tokens on
//     an earlier line of the same list or in the global list for a
//     provider or project rule;
//   - the argument guard lets through with c what it lets through with r
//     (Guard on r's tokens finds nothing with c it does not find with r):
//     `sed` does not cover `sed -i`, since with `sed` alone the guard
//     sends `-i` to a person.
//
// r is a rule as Rules returns it; whether r itself is active does not
// matter. Of several covering rules the broadest is returned.
func (s *Store) CoveringRule(r Rule) *Rule {
	if len(r.Tokens) == 0 {
		return nil
	}
	lists := []*listState{s.snap.Load().global}
	switch r.Scope {
	case ScopeProvider:
		lists = append(lists, s.providerList(r.Provider))
	case ScopeProject:
		lists = append(lists, s.projectList(r.Project))
	}
	var own []Finding // Guard's findings with r itself, computed on first need
	ownDone := false
	var covering *Rule
	for _, ls := range lists {
		if ls == nil || covering != nil {
			continue
		}
		ls.trie.walk(r.Tokens, func(c *Rule) bool {
			if c.File == r.File && c.Line == r.Line {
				return false // r itself: no rule of this list before it has its tokens
			}
			if len(c.Tokens) == len(r.Tokens) {
				covering = c
				return false
			}
			if !ownDone {
				own, ownDone = Guard(r.Tokens, len(r.Tokens), ""), true
			}
			if findingsWithin(Guard(r.Tokens, len(c.Tokens), ""), own) {
				covering = c
				return false
			}
			return true
		})
	}
	return covering
}

// findingsWithin reports whether every finding of fs is also in of (same
// argument, same reason).
func findingsWithin(fs, of []Finding) bool {
	for _, f := range fs {
		found := false
		for _, o := range of {
			if o.Arg == f.Arg && o.Why == f.Why {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
