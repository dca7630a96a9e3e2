package hook

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// LiteralArgv reads a shell command line the way an agent's shell would and
// returns its argv when, and only when, the line is a single simple command
// made of literal words. Otherwise argv is nil and reason says, for a person,
// which shell construct was found.
//
// The line is parsed with mvdan.cc/sh/v3/syntax as bash. It is literal when:
//
//   - it holds exactly one command (surrounding blank space and newlines are
//     fine; a second command after a newline, ;, &&, || or | is not), with no
//     trailing ; or &, no !, no comment, no redirection or here-document and
//     no assignment before the command;
//   - the command is a simple command (not a subshell, group, function,
//     if/for/while/case, [[ ]], (( )), declare, let, …);
//   - every word consists of: unquoted text made only of ASCII letters,
//     digits, _ @ % + = : , . / - and non-ASCII characters, with backslash
//     escapes (\x stands for x); single-quoted text; and double-quoted text
//     holding no $, backtick or ! (\$ \` \" \\ inside double quotes stand for
//     the escaped character, any other backslash is kept).
//
// Everything else is refused, on purpose conservatively: any unquoted glob
// or pattern character (* ? [ ] and the extended-glob forms), braces { }
// (brace expansion), ~ anywhere unquoted (tilde expansion, which bash also
// applies after = and : in arguments), # (a comment in bash, a glob in zsh
// with extended_glob), ^ and !, $ in any form ($VAR, ${…}, $(…), $((…)),
// $'…', $"…"), backticks, and process substitution. A comment is refused
// too, though bash would ignore it, because whether # starts a comment
// depends on the shell and its options (interactive zsh without
// interactive_comments passes it on as an argument).
//
// A line holding a control character other than tab and newline (NUL, CR,
// ESC, DEL, …) is refused before parsing, quoted or not: the parser takes
// CR for blank space where bash takes it for an ordinary character, so
// "git status \<CR><LF>rm -rf x" would read as one command with the
// arguments "rm -rf x" while bash runs two, and a NUL cuts the line short
// for the shell. Such characters have no place in a command a person
// allow-listed, and the card shows them escaped.
//
// A line that does not parse, or parses to no command, is refused.
func LiteralArgv(line string) (argv []string, reason string) {
	if i := strings.IndexFunc(line, isLineControl); i >= 0 {
		return nil, fmt.Sprintf("the command line holds the control character %q at byte %d, which shells read in different ways", line[i:i+1], i)
	}
	parser := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash))
	file, err := parser.Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, "the command line does not parse as shell: " + err.Error()
	}
	if len(file.Last) > 0 {
		return nil, "the command line has a comment (#)"
	}
	switch len(file.Stmts) {
	case 0:
		return nil, "the command line holds no command"
	case 1:
	default:
		return nil, fmt.Sprintf("the command line holds %d commands (separated by ; & or a newline)", len(file.Stmts))
	}
	stmt := file.Stmts[0]
	switch {
	case len(stmt.Comments) > 0:
		return nil, "the command line has a comment (#)"
	case stmt.Negated:
		return nil, "the command is negated with !"
	case stmt.Background:
		return nil, "the command runs in the background (&)"
	case stmt.Coprocess || stmt.Disown:
		return nil, "the command is a coprocess or disowned job"
	case stmt.Semicolon.IsValid():
		return nil, "the command line has a command separator (;)"
	case len(stmt.Redirs) > 0:
		return nil, "the command has a redirection or here-document"
	}
	var call *syntax.CallExpr
	switch cmd := stmt.Cmd.(type) {
	case *syntax.CallExpr:
		call = cmd
	case *syntax.BinaryCmd:
		return nil, fmt.Sprintf("the command line joins commands with %s", cmd.Op)
	default:
		return nil, "the command line uses shell syntax (" + nodeKind(stmt.Cmd) + "), not a single simple command"
	}
	if len(call.Assigns) > 0 {
		return nil, "the command line assigns a variable before the command"
	}
	if len(call.Args) == 0 {
		return nil, "the command line holds no command"
	}
	argv = make([]string, 0, len(call.Args))
	for i, w := range call.Args {
		s, why := literalWord(w)
		if why != "" {
			return nil, fmt.Sprintf("word %d %s", i+1, why)
		}
		argv = append(argv, s)
	}
	return argv, ""
}

// isLineControl reports whether r is a control character LiteralArgv
// refuses: any C0 control but tab and newline, and DEL.
func isLineControl(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f
}

// nodeKind names a shell command node for a person.
func nodeKind(n syntax.Command) string {
	switch n.(type) {
	case *syntax.Subshell:
		return "a subshell ( … )"
	case *syntax.Block:
		return "a command group { … }"
	case *syntax.IfClause:
		return "if"
	case *syntax.WhileClause:
		return "while/until"
	case *syntax.ForClause:
		return "for"
	case *syntax.CaseClause:
		return "case"
	case *syntax.FuncDecl:
		return "a function definition"
	case *syntax.ArithmCmd:
		return "arithmetic (( … ))"
	case *syntax.TestClause:
		return "a test [[ … ]]"
	case *syntax.DeclClause:
		return "a declaration"
	case *syntax.LetClause:
		return "let"
	case *syntax.TimeClause:
		return "time"
	case *syntax.CoprocClause:
		return "coproc"
	default:
		return fmt.Sprintf("%T", n)
	}
}

// literalWord returns the value of a word made only of literal parts, or a
// reason (completing "word N …") why it is not literal.
func literalWord(w *syntax.Word) (string, string) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if why := unquotedLiteral(&b, p.Value); why != "" {
				return "", why
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", "uses $'…' quoting"
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", `uses $"…" quoting`
			}
			for _, inner := range p.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					return "", "expands something inside double quotes (" + partKind(inner) + ")"
				}
				if why := doubleQuotedLiteral(&b, lit.Value); why != "" {
					return "", why
				}
			}
		default:
			return "", "uses " + partKind(part)
		}
	}
	return b.String(), ""
}

// partKind names a word part for a person.
func partKind(p syntax.WordPart) string {
	switch p.(type) {
	case *syntax.ParamExp:
		return "a variable ($NAME or ${…})"
	case *syntax.CmdSubst:
		return "command substitution ($(…) or backticks)"
	case *syntax.ArithmExp:
		return "arithmetic expansion $((…))"
	case *syntax.ProcSubst:
		return "process substitution <(…) or >(…)"
	case *syntax.ExtGlob:
		return "an extended glob"
	case *syntax.BraceExp:
		return "brace expansion"
	default:
		return fmt.Sprintf("%T", p)
	}
}

// unquotedLiteral appends the value of unquoted literal text to b, resolving
// backslash escapes, or returns why the text is not plainly literal.
func unquotedLiteral(b *strings.Builder, raw string) string {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' {
			if i+1 == len(raw) {
				// bash keeps a backslash that ends the input; refuse the
				// ambiguity rather than guess.
				return "ends with a lone backslash"
			}
			i++
			b.WriteByte(raw[i])
			continue
		}
		if c >= 0x80 || plainUnquoted(c) {
			b.WriteByte(c)
			continue
		}
		return fmt.Sprintf("has the unquoted shell character %q (glob, expansion or operator)", string(c))
	}
	return ""
}

// plainUnquoted reports whether an ASCII byte stands for itself outside
// quotes in every shell agents use (bash, zsh, dash).
func plainUnquoted(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("_@%+=:,./-", c) >= 0
}

// doubleQuotedLiteral appends the value of literal text inside double quotes
// to b, or returns why it is not plainly literal.
func doubleQuotedLiteral(b *strings.Builder, raw string) string {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '\\':
			if i+1 < len(raw) && strings.IndexByte("$`\"\\", raw[i+1]) >= 0 {
				i++
				b.WriteByte(raw[i])
				continue
			}
			b.WriteByte(c)
		case '!':
			return "has ! inside double quotes (history expansion in interactive shells)"
		default:
			b.WriteByte(c)
		}
	}
	return ""
}
