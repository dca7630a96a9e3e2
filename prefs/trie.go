package prefs

// trieNode is one node of a token trie: the path from the root spells a
// token sequence, and rule is set when an active rule has exactly those
// tokens. Lookup cost depends on the length of argv, not on the number of
// rules. A trie is built once and never changed, so readers need no lock.
type trieNode struct {
	// children maps the next token to its node; nil for a leaf.
	children map[string]*trieNode
	// rule is the first active rule (lowest line) with this node's tokens.
	rule *Rule
}

// buildTrie returns the trie of the active rules in rules. When several rules
// have the same tokens the first one wins. The trie points into rules.
func buildTrie(rules []Rule) *trieNode {
	root := &trieNode{}
	for i := range rules {
		if !rules[i].Active || len(rules[i].Tokens) == 0 {
			continue
		}
		node := root
		for _, token := range rules[i].Tokens {
			child := node.children[token]
			if child == nil {
				if node.children == nil {
					node.children = make(map[string]*trieNode)
				}
				child = &trieNode{}
				node.children[token] = child
			}
			node = child
		}
		if node.rule == nil {
			node.rule = &rules[i]
		}
	}
	return root
}

// match returns the broadest rule (fewest tokens) whose tokens are a prefix
// of argv, or with longest the longest such rule; nil when there is none. A
// nil trie matches nothing.
func (t *trieNode) match(argv []string, longest bool) *Rule {
	node := t
	var found *Rule
	for _, token := range argv {
		if node == nil {
			return found
		}
		node = node.children[token]
		if node != nil && node.rule != nil {
			if !longest {
				return node.rule
			}
			found = node.rule
		}
	}
	return found
}
