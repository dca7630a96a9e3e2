package display

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ParseWords reads a command a person typed as shell words (the "Add rule"
// field of Preferences) with bash's syntax (mvdan.cc/sh/v3/syntax) and
// returns the tokens: `git commit -m 'a b'` gives [git commit -m "a b"]. It
// is the inverse of Command: ParseWords(Command(argv)) is argv for every
// argv without a NUL byte. Words may be bare,
// 'single-quoted', "double-quoted" (without $, ` or expansions) or $'…'
// (ANSI-C quoting, for control characters), and backslash escapes work as
// in a shell. Anything that is not a single simple command of literal words
// — operators, redirections, variables, globs, substitutions, comments — is
// an error naming the construct, because a rule is a literal argv prefix
// and nothing in it is ever expanded.
func ParseWords(line string) ([]string, error) {
	if strings.TrimSpace(line) == "" {
		return nil, errors.New("type the command to allow, as you would in a terminal, e.g. git status")
	}
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, fmt.Errorf("not valid shell words: %v", err)
	}
	if len(f.Last) > 0 || len(f.Stmts) == 1 && len(f.Stmts[0].Comments) > 0 {
		return nil, errors.New("a rule cannot hold a comment (#): quote the # if it is part of an argument")
	}
	if len(f.Stmts) != 1 {
		return nil, errors.New("type one command: ; & && || and newlines separate several, which a rule cannot hold")
	}
	st := f.Stmts[0]
	switch {
	case st.Negated || st.Background || st.Coprocess:
		return nil, errors.New("a rule cannot hold ! or &: type the command alone")
	case len(st.Redirs) > 0:
		return nil, errors.New("a rule cannot hold a redirection (< > >>): agentgate never runs a shell, so quote the character if it is part of an argument")
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return nil, errors.New("type a plain command: pipes, subshells, loops and other shell constructs cannot be a rule")
	}
	if len(call.Assigns) > 0 {
		return nil, errors.New("a rule cannot set variables (NAME=value before the command): agentgate runs commands without agent-supplied environment")
	}
	tokens := make([]string, 0, len(call.Args))
	for i, w := range call.Args {
		s, err := literalWord(w)
		if err != nil {
			return nil, fmt.Errorf("word %d (%s): %v", i+1, line[w.Pos().Offset():w.End().Offset()], err)
		}
		tokens = append(tokens, s)
	}
	return tokens, nil
}

// literalWord returns the value of a word made only of literal parts.
func literalWord(w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[]{}~") {
				return "", errors.New("holds a glob, brace or tilde character; quote it to mean the character itself")
			}
			b.WriteString(unescapeBare(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				v, err := expandANSIC(p.Value)
				if err != nil {
					return "", err
				}
				b.WriteString(v)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", errors.New(`$"…" (locale translation) is not a literal`)
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return "", errors.New("double quotes hold an expansion ($, `); use single quotes for literal text")
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			return "", errors.New("holds an expansion ($VAR, $(…), `…`, globs); rules are literal, so quote it with single quotes")
		}
	}
	return b.String(), nil
}

// unescapeBare removes the backslashes of an unquoted literal (\x → x; a
// backslash-newline joins lines).
func unescapeBare(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that escape $ ` " \ and newline
// inside double quotes; other backslashes stay, as in a shell.
func unescapeDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// expandANSIC expands the body of bash's $'…' quoting: \n \t \r \a \b \e \f
// \v \\ \' \" \? \xHH \uHHHH \UHHHHHHHH and octal \NNN.
func expandANSIC(s string) (string, error) {
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
			if e == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(v)
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, j := 0, i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				v = v*8 + int(s[j]-'0')
				j++
			}
			if v == 0 {
				return "", errors.New(`holds \0 (a NUL byte), which no command argument can carry`)
			}
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	if strings.IndexByte(b.String(), 0) >= 0 {
		return "", errors.New(`holds a NUL byte, which no command argument can carry`)
	}
	return b.String(), nil
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
