// Package prefs holds what people decided ahead of time: the allow-lists
// that let a command run without asking, the trust given to project lists,
// and the settings other packages read.
//
// An allow-list is a text file with one rule per line, each line a Tcl 8.6
// list of tokens (ParseList, FormatList). A command is allowed when its argv
// starts with a rule's tokens, compared exactly. Rules live in three scopes
// (global, provider, project; see Scope and Paths); a Store reads them,
// decides (Decide), edits them keeping every other byte (Add, Remove),
// follows hand edits (Watch) and tracks which project rules a person
// confirmed (Untrusted, Trust). docs/allow-lists.md describes the files for
// the people who edit them.
//
// prefs imports no other agentgate package.
package prefs
