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
// program; the catalog it reads is one list with the launchers
// (programs.go). Grants are a person's temporary permissions ("for 15
// minutes", "until agentgate quits"), bound to a project, a provider and
// the program's file, kept in the state directory and honoured by every
// host; an Instance is the running app they may last for. CoveringRule
// finds the rule that makes another redundant. docs/allow-lists.md
// describes all of it for the people who edit rules.
//
// prefs imports no other agentgate package but the leaves exec/display
// (the display form of findings and grants), exec/envrisk (the variables
// that steer programs) and exec/procspec (the identity of a program's
// file, which a grant is bound to).
package prefs
