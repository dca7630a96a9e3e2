// Package shellword is agentgate's one reader of shell words: it turns a
// line of shell text into the argv a shell would run, when and only when
// the line is a single simple command made of literal words. The syntax
// tree comes from mvdan.cc/sh/v3/syntax (bash dialect); this package only
// decides which trees are literal and what their words are.
//
// Two callers read shell text:
//
//   - the hook (cli/hook), deciding a command line an agent's shell (bash
//     or zsh) is about to run: AgentCommand;
//   - a person typing a rule as shell words (Preferences, the terminal):
//     Typed, which also accepts bash's $'…' quoting, the form
//     exec/display writes for control characters.
//
// Both are proven against a real bash by a property test: for every line
// they accept, bash runs exactly the argv they return.
//
// The package is a leaf (the standard library and mvdan.cc/sh only), so the
// latency-critical hook can use it.
package shellword

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// AgentCommand returns the argv that bash or zsh runs for line when line is
// a single simple command of literal words, and otherwise an error saying,
// for a person, which construct was found. It is literal when:
//
//   - it holds exactly one command (surrounding blank space and newlines are
//     fine; a second command after a newline, ;, &&, || or | is not), with no
//     trailing ; or &, no !, no comment, no redirection or here-document and
//     no assignment before the command;
//   - the command is a simple command (not a subshell, group, function,
//     if/for/while/case, [[ ]], (( )), declare, let, time, coproc…);
//   - every word consists of: unquoted text made only of ASCII letters,
//     digits, _ @ % + = : , . / - and non-ASCII characters, with backslash
//     escapes (\x stands for x, a backslash-newline is removed); single-quoted
//     text; and double-quoted text (inside which \$ \` \" \\ stand for the
//     escaped character, a backslash-newline is removed and any other
//     backslash is kept).
//
// Everything else is refused, on purpose conservatively, because the
// agent's shell may be bash or zsh with any options: any unquoted glob or
// pattern character (* ? [ ] and the extended-glob forms), braces { }
// (brace expansion), ~ anywhere unquoted (tilde expansion, which bash also
// applies after = and : in arguments), # (a comment in bash, a glob in zsh
// with extended_glob), ^, !, a word starting with an unquoted = (zsh's
// =command expansion), two single-quoted strings back to back ('a”b' is
// a'b in zsh with rc_quotes), $ in any form ($VAR, ${…}, $(…), $((…)), $'…',
// $"…", and a $ inside double quotes even where bash would keep it), a
// backtick, ! inside double quotes (history expansion in interactive
// shells), and process substitution. A $ is refused wherever it is not
// escaped because bash removes a backslash-newline before it looks for
// expansions: in "$\<newline>(cmd)" it runs cmd, though a parser that sees
// the $ and the ( apart would call the word literal.
//
// A line holding a control character other than tab and newline (NUL, CR,
// ESC, DEL, …) is refused before parsing, quoted or not: the parser takes
// CR for blank space where bash takes it for an ordinary character, so
// "git status \<CR><LF>rm -rf x" would read as one command while bash runs
// two, and a NUL cuts the line short for the shell. A line that does not
// parse, or parses to no command, is refused; so is a word ending in a lone
// backslash at the end of the line, and a program name starting with %
// (bash resumes a job instead).
func AgentCommand(line string) ([]string, error) {
	return parse(line, false)
}

// Typed reads a command a person typed as shell words (a rule in
// Preferences or at the terminal) and returns its tokens:
// `git commit -m 'a b'` gives [git commit -m "a b"]. It accepts what
// AgentCommand accepts and, in addition, bash's ANSI-C quoting $'…' with
// the escapes \a \b \e \E \f \n \r \t \v \\ \' \" \? \xHH \uHHHH
// \UHHHHHHHH and octal \NNN (an escape bash reads otherwise, such as \cX, a
// NUL, a surrogate or a code point above U+10FFFF, is refused). It is the
// inverse of display.Command: Typed(display.Command(argv)) is argv for
// every argv without a NUL byte. An empty or blank line is an error asking
// for a command.
func Typed(line string) ([]string, error) {
	if strings.TrimSpace(line) == "" {
		return nil, errors.New("type the command, as you would in a terminal, e.g. git status")
	}
	return parse(line, true)
}

// parse is AgentCommand (ansiC false) and Typed (ansiC true).
func parse(line string, ansiC bool) ([]string, error) {
	if i := strings.IndexFunc(line, isLineControl); i >= 0 {
		return nil, fmt.Errorf("the command line holds the control character %q at byte %d, which shells read in different ways", line[i:i+1], i)
	}
	parser := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash))
	file, err := parser.Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, errors.New("the command line does not parse as shell: " + err.Error())
	}
	if len(file.Last) > 0 {
		return nil, errors.New("the command line has a comment (#); quote the # if it is part of an argument")
	}
	switch len(file.Stmts) {
	case 0:
		return nil, errors.New("the command line holds no command")
	case 1:
	default:
		return nil, fmt.Errorf("the command line holds %d commands (separated by ; & or a newline)", len(file.Stmts))
	}
	stmt := file.Stmts[0]
	switch {
	case len(stmt.Comments) > 0:
		return nil, errors.New("the command line has a comment (#); quote the # if it is part of an argument")
	case stmt.Negated:
		return nil, errors.New("the command is negated with !")
	case stmt.Background:
		return nil, errors.New("the command runs in the background (&)")
	case stmt.Coprocess || stmt.Disown:
		return nil, errors.New("the command is a coprocess or disowned job")
	case stmt.Semicolon.IsValid():
		return nil, errors.New("the command line has a command separator (;)")
	case len(stmt.Redirs) > 0:
		return nil, errors.New("the command has a redirection or here-document (< > >>); quote the character if it is part of an argument")
	}
	var call *syntax.CallExpr
	switch cmd := stmt.Cmd.(type) {
	case *syntax.CallExpr:
		call = cmd
	case *syntax.BinaryCmd:
		return nil, fmt.Errorf("the command line joins commands with %s", cmd.Op)
	default:
		return nil, errors.New("the command line uses shell syntax (" + nodeKind(stmt.Cmd) + "), not a single simple command")
	}
	if len(call.Assigns) > 0 {
		return nil, errors.New("the command line assigns a variable before the command (NAME=value)")
	}
	if len(call.Args) == 0 {
		return nil, errors.New("the command line holds no command")
	}
	argv := make([]string, 0, len(call.Args))
	for i, w := range call.Args {
		s, why := literalWord(w, ansiC)
		if why != "" {
			return nil, fmt.Errorf("word %d (%s) %s", i+1, line[w.Pos().Offset():w.End().Offset()], why)
		}
		argv = append(argv, s)
	}
	if !ansiC && strings.HasPrefix(argv[0], "%") {
		return nil, fmt.Errorf("the command %s starts with %%, which bash reads as a job to resume (fg), quoted or not", argv[0])
	}
	return argv, nil
}

// isLineControl reports whether r is a control character parse refuses:
// any C0 control but tab and newline, and DEL.
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
		return "for/select"
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
// reason (completing "word N (…) …") why it is not literal.
func literalWord(w *syntax.Word, ansiC bool) (string, string) {
	var b strings.Builder
	prevSingle := false
	for _, part := range w.Parts {
		single := false
		switch p := part.(type) {
		case *syntax.Lit:
			if why := unquotedLiteral(&b, p.Value); why != "" {
				return "", why
			}
		case *syntax.SglQuoted:
			switch {
			case p.Dollar && !ansiC:
				return "", "uses $'…' quoting"
			case p.Dollar:
				v, why := expandANSIC(p.Value)
				if why != "" {
					return "", why
				}
				b.WriteString(v)
			case prevSingle:
				return "", "has two single-quoted strings back to back ('a''b' means a'b in zsh with rc_quotes); join them into one"
			default:
				b.WriteString(p.Value)
				single = true
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", `uses $"…" quoting`
			}
			var raw strings.Builder
			for _, inner := range p.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					return "", "expands something inside double quotes (" + partKind(inner) + "); use single quotes for literal text"
				}
				raw.WriteString(lit.Value)
			}
			if why := doubleQuotedLiteral(&b, raw.String()); why != "" {
				return "", why
			}
		default:
			return "", "uses " + partKind(part) + "; a literal needs single quotes"
		}
		prevSingle = single
	}
	if leadingUnquotedEquals(w) {
		return "", "starts with an unquoted = (zsh replaces =name with the path of the program name); quote it"
	}
	return b.String(), ""
}

// leadingUnquotedEquals reports whether the first character of w's value is
// an unquoted = (after line continuations, which stand for nothing).
func leadingUnquotedEquals(w *syntax.Word) bool {
	for _, part := range w.Parts {
		lit, ok := part.(*syntax.Lit)
		if !ok {
			return false
		}
		raw := lit.Value
		for strings.HasPrefix(raw, "\\\n") {
			raw = raw[2:]
		}
		if raw != "" {
			return raw[0] == '='
		}
	}
	return false
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

// unquotedLiteral appends the value of unquoted literal text to b,
// resolving backslash escapes (a backslash-newline is a line continuation
// and stands for nothing), or returns why the text is not plainly literal.
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
			if raw[i] != '\n' {
				b.WriteByte(raw[i])
			}
			continue
		}
		if c >= 0x80 || plainUnquoted(c) {
			b.WriteByte(c)
			continue
		}
		return fmt.Sprintf("has the unquoted shell character %q (glob, expansion or operator); quote it", string(c))
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

// doubleQuotedLiteral appends the value of the text inside double quotes to
// b, or returns why it is not plainly literal.
func doubleQuotedLiteral(b *strings.Builder, raw string) string {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '\\':
			if i+1 < len(raw) && raw[i+1] == '\n' {
				i++
				continue
			}
			if i+1 < len(raw) && strings.IndexByte("$`\"\\", raw[i+1]) >= 0 {
				i++
				b.WriteByte(raw[i])
				continue
			}
			b.WriteByte(c)
		case '$':
			return "has $ inside double quotes (an expansion in the shell); write \\$ or use single quotes"
		case '`':
			return "has a backtick inside double quotes (command substitution)"
		case '!':
			return "has ! inside double quotes (history expansion in interactive shells); use single quotes"
		default:
			b.WriteByte(c)
		}
	}
	return ""
}

// expandANSIC expands the body of bash's $'…' quoting (see Typed), or
// returns why it is refused.
func expandANSIC(s string) (string, string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			return "", `uses \c (a control character) inside $'…'; write it as \xHH`
		case 'x', 'u', 'U':
			maxDigits := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			var v rune
			for j < len(s) && j-i-1 < maxDigits && isHex(s[j]) {
				v = v*16 + rune(hexVal(s[j]))
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			switch {
			case v == 0:
				return "", `holds a NUL byte (\x00), which no command argument can carry`
			case e == 'x':
				b.WriteByte(byte(v))
			case v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff):
				return "", fmt.Sprintf(`holds \%c%X, which is not a Unicode character`, e, v)
			default:
				b.WriteRune(v)
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, j := 0, i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				v = v*8 + int(s[j]-'0')
				j++
			}
			if v&0xff == 0 {
				return "", `holds \0 (a NUL byte), which no command argument can carry`
			}
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), ""
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// hexVal returns the value of the hexadecimal digit c.
func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}
