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
// confirmed (Untrusted, Trust). The argument guard (Guard) keeps a
// rule-matched command from running without a person when an argument
// beyond the rule makes its program write outside its obvious output, run
// another program or work on another directory, when a wrapper hides the
// command, or when the git repository it works on is configured to run a
// program; the catalog it reads is one list with the launchers of SPEC §3
// (programs.go). docs/allow-lists.md describes both for the people who
// edit rules.
//
// prefs imports no other agentgate package but the leaves exec/display
// (the display form of findings) and exec/envrisk (the variables that
// steer programs).
package prefs
