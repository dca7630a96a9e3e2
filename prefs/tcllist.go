package prefs

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ParseList splits line into the elements of a Tcl 8.6 list, exactly as Tcl's
// own list parser (TclFindElement, as used by llength and lindex) does:
//
//   - Elements are separated by any run of list white space: space, \t, \n,
//     \v, \f and \r. Other characters, including non-ASCII spaces such as
//     U+00A0, are ordinary.
//   - An element that starts with "{" ends at the matching "}" and is taken
//     literally: no backslash substitution; a backslash only stops the next
//     character from counting as a brace.
//   - An element that starts with a double quote ends at the next unescaped
//     double quote; backslash sequences inside are substituted.
//   - Any other element runs to the next white space; backslash sequences are
//     substituted, and an escaped white space character belongs to the element.
//   - Backslash sequences: \a \b \f \n \r \t \v; \ooo (one to three octal
//     digits, at most \377); \xhh (one or two hex digits); \uhhhh (one to four
//     hex digits); \Uhhhhhhhh (one to eight hex digits, as many as keep the
//     value at most U+10FFFF; like Tcl 8.6 built with its default
//     TCL_UTF_MAX=3, a value above U+FFFF becomes U+FFFD); a high and a low
//     surrogate written as two adjacent escapes form one character, a lone
//     surrogate is kept in the three-byte form Tcl writes (not valid UTF-8);
//     backslash-newline
//     plus the spaces and tabs after it become one space; a backslash before
//     any other character yields that character (U+FFFD for a character above
//     U+FFFF, again as Tcl 8.6 does); a backslash at the very end
//     of the string is kept.
//   - A closing brace or quote must be followed by white space or the end.
//
// On malformed input ParseList returns nil and a *ParseError whose Column is
// the 1-based position, counted in characters (runes), of the opening brace or
// quote that is never closed, or of the character that follows a closing brace
// or quote; File and Line are left empty. An empty or all-white-space line
// yields an empty, non-nil slice.
func ParseList(line string) ([]string, error) {
	tokens := []string{}
	i, n := 0, len(line)
	for {
		for i < n && isListSpace(line[i]) {
			i++
		}
		if i >= n {
			return tokens, nil
		}
		var token string
		var err error
		switch line[i] {
		case '{':
			token, i, err = parseBraced(line, i)
		case '"':
			token, i, err = parseQuoted(line, i)
		default:
			token, i = parseBare(line, i)
		}
		if err != nil {
			return nil, err
		}
		tokens = append(tokens, token)
	}
}

// parseBraced reads the brace-quoted element whose "{" is at line[start] and
// returns it with the index just after the closing brace.
func parseBraced(line string, start int) (string, int, error) {
	depth := 0
	for j := start; j < len(line); j++ {
		switch line[j] {
		case '\\':
			j++ // the escaped character never counts as a brace
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				if err := checkElementEnd(line, j+1, "braces"); err != nil {
					return "", 0, err
				}
				return line[start+1 : j], j + 1, nil
			}
		}
	}
	return "", 0, columnError(line, start, "unmatched open brace in list")
}

// parseQuoted reads the quoted element whose opening double quote is at
// line[start] and returns it, substituted, with the index after the closing
// quote.
func parseQuoted(line string, start int) (string, int, error) {
	var b strings.Builder
	j := start + 1
	for j < len(line) {
		switch line[j] {
		case '"':
			if err := checkElementEnd(line, j+1, "quotes"); err != nil {
				return "", 0, err
			}
			return b.String(), j + 1, nil
		case '\\':
			j += substituteBackslash(&b, line[j:])
		default:
			b.WriteByte(line[j])
			j++
		}
	}
	return "", 0, columnError(line, start, "unmatched open quote in list")
}

// parseBare reads the unquoted element starting at line[start] and returns it,
// substituted, with the index of the white space or end that ends it.
func parseBare(line string, start int) (string, int) {
	j := start
	for j < len(line) && line[j] != '\\' && !isListSpace(line[j]) {
		j++
	}
	if j >= len(line) || line[j] != '\\' {
		return line[start:j], j // the common case: nothing to substitute
	}
	var b strings.Builder
	b.WriteString(line[start:j])
	for j < len(line) && !isListSpace(line[j]) {
		if line[j] == '\\' {
			j += substituteBackslash(&b, line[j:])
			continue
		}
		b.WriteByte(line[j])
		j++
	}
	return b.String(), j
}

// checkElementEnd reports an error unless line[at] is white space or the end,
// as Tcl requires after a closing brace or quote.
func checkElementEnd(line string, at int, quoting string) error {
	if at >= len(line) || isListSpace(line[at]) {
		return nil
	}
	return columnError(line, at, fmt.Sprintf("list element in %s followed by \"%s\" instead of space", quoting, garbageExcerpt(line[at:])))
}

// garbageExcerpt returns what Tcl quotes of the text after a closing brace or
// quote: up to the next white space, at most 20 bytes of Tcl's internal form,
// in which NUL takes two bytes and a character above U+FFFF takes six (a
// surrogate pair). A character that does not fit is left out; of a pair that
// does not fit, the high surrogate alone is shown, as Tcl does.
func garbageExcerpt(rest string) string {
	const limit = 20
	var b strings.Builder
	used := 0
	for _, r := range rest {
		if r < utf8.RuneSelf && isListSpace(byte(r)) {
			break
		}
		size := utf8.RuneLen(r)
		switch {
		case r == 0:
			size = 2
		case r > 0xFFFF:
			if used+3 <= limit && used+6 > limit {
				writeCodePoint(&b, 0xD800+(r-0x10000)>>10)
				return b.String()
			}
			size = 6
		}
		if used+size > limit {
			break
		}
		used += size
		b.WriteRune(r)
	}
	return b.String()
}

// columnError builds the *ParseError for the byte offset at of line.
func columnError(line string, at int, reason string) *ParseError {
	return &ParseError{Column: utf8.RuneCountInString(line[:at]) + 1, Reason: reason}
}

// isListSpace reports whether c separates list elements in Tcl 8.6.
func isListSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// substituteBackslash writes the value of the backslash sequence at the start
// of s (s[0] is the backslash) to b and returns how many bytes it spans.
func substituteBackslash(b *strings.Builder, s string) int {
	if len(s) == 1 {
		b.WriteByte('\\')
		return 1
	}
	switch c := s[1]; c {
	case 'a':
		b.WriteByte('\a')
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'v':
		b.WriteByte('\v')
	case 'x':
		return hexEscape(b, s)
	case 'u', 'U':
		return codePointEscape(b, s)
	case '\n':
		j := 2
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		b.WriteByte(' ')
		return j
	case '0', '1', '2', '3', '4', '5', '6', '7':
		value, j := rune(c-'0'), 2
		for j < len(s) && j < 4 && s[j] >= '0' && s[j] <= '7' && value*8+rune(s[j]-'0') <= 0xFF {
			value = value*8 + rune(s[j]-'0')
			j++
		}
		b.WriteRune(value)
		return j
	default:
		r, size := utf8.DecodeRuneInString(s[1:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteByte(c) // not UTF-8: keep the byte as it is
			return 2
		}
		if r > 0xFFFF {
			r = utf8.RuneError // Tcl 8.6 (TCL_UTF_MAX=3) cannot hold it
		}
		b.WriteRune(r)
		return 1 + size
	}
	return 2
}

// hexEscape substitutes \x at the start of s: one or two hex digits. Without
// digits the sequence is the letter x itself.
func hexEscape(b *strings.Builder, s string) int {
	value, j := scanHex(s, 2, 0xFF)
	if j == 2 {
		b.WriteByte('x')
		return 2
	}
	b.WriteRune(value)
	return j
}

// codePointEscape substitutes \u or \U at the start of s. A high surrogate
// and a low surrogate written as two adjacent escapes form one character, as
// Tcl joins them when it writes UTF-8. Without digits the sequence is the
// letter itself.
func codePointEscape(b *strings.Builder, s string) int {
	value, j, ok := scanCodePoint(s)
	if !ok {
		b.WriteByte(s[1])
		return 2
	}
	if value >= 0xD800 && value <= 0xDBFF {
		if low, k, ok := scanCodePoint(s[j:]); ok && low >= 0xDC00 && low <= 0xDFFF {
			b.WriteRune(0x10000 + (value-0xD800)<<10 + (low - 0xDC00))
			return j + k
		}
	}
	writeCodePoint(b, value)
	return j
}

// scanCodePoint reads a \u escape (one to four hex digits) or a \U escape
// (one to eight, as many as keep the value at most U+10FFFF) at the start of
// s. Tcl 8.6 as built by default (TCL_UTF_MAX=3) holds no character above
// U+FFFF, so \U yields U+FFFD for those. ok is false when s does not start
// with such an escape with at least one digit.
func scanCodePoint(s string) (value rune, n int, ok bool) {
	if len(s) < 3 || s[0] != '\\' {
		return 0, 0, false
	}
	switch s[1] {
	case 'u':
		value, n = scanHex(s, 4, 0xFFFF)
	case 'U':
		value, n = scanHex(s, 8, utf8.MaxRune)
		if value > 0xFFFF {
			value = utf8.RuneError
		}
	default:
		return 0, 0, false
	}
	return value, n, n > 2
}

// scanHex reads hex digits after the two-byte escape prefix of s, at most
// maxDigits of them, stopping before a digit that would make the value exceed
// maxValue. It returns the value and the index after the last digit read.
func scanHex(s string, maxDigits int, maxValue rune) (rune, int) {
	var value rune
	j := 2
	for j < len(s) && j < 2+maxDigits {
		d := hexDigit(s[j])
		if d < 0 || value*16+d > maxValue {
			break
		}
		value = value*16 + d
		j++
	}
	return value, j
}

// hexDigit returns the value of the hex digit c, or -1.
func hexDigit(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

// writeCodePoint writes value as UTF-8. A surrogate, which UTF-8 proper
// cannot hold, is written in the generalised three-byte form, as Tcl does.
func writeCodePoint(b *strings.Builder, value rune) {
	if value >= 0xD800 && value <= 0xDFFF {
		b.WriteByte(byte(0xE0 | value>>12))
		b.WriteByte(byte(0x80 | (value>>6)&0x3F))
		b.WriteByte(byte(0x80 | value&0x3F))
		return
	}
	b.WriteRune(value)
}

// FormatList returns tokens as one Tcl 8.6 list on a single line, elements
// separated by one space, each in the simplest form that Tcl reads back to the
// same token:
//
//   - bare, when the token holds none of white space, { } [ ] $ ; " \ at a
//     place where Tcl would need quoting (braces in the middle are fine when
//     balanced), does not start with { or ", and is not a first token starting
//     with # (which would read as a comment line);
//   - else in braces, when its braces balance, it does not end in an odd
//     backslash, and it holds no backslash-newline, newline or carriage return
//     (Tcl itself would brace a token with a newline across lines; here every
//     rule stays on one line);
//   - else with backslash escapes: \ before each of ] [ $ ; space \ " { } and a
//     leading # of the first token, and \f \n \r \t \v for those characters.
//
// The empty token is written {}; an empty list is the empty string. Other
// characters, including control characters and non-ASCII, are written as they
// are. ParseList(FormatList(t)) equals t for every t, and so does Tcl's own
// list parser.
func FormatList(tokens []string) string {
	var b strings.Builder
	for i, token := range tokens {
		if i > 0 {
			b.WriteByte(' ')
		}
		formatElement(&b, token, i == 0)
	}
	return b.String()
}

// elementForm is how formatElement writes one token.
type elementForm int

// The forms of an element, from simplest to most general.
const (
	formBare elementForm = iota
	formBraced
	formEscaped
)

// chooseForm decides the simplest form that keeps token intact on one line
// (see FormatList). first says whether token is the first element of the list.
func chooseForm(token string, first bool) elementForm {
	needsQuoting := token[0] == '{' || token[0] == '"' || (first && token[0] == '#')
	bracesUsable := true
	nesting := 0
	for i := 0; i < len(token); i++ {
		switch token[i] {
		case '{':
			nesting++
		case '}':
			nesting--
			if nesting < 0 {
				bracesUsable = false
			}
		case ']', '[', '"', '$', ';', ' ', '\t', '\v', '\f':
			needsQuoting = true
		case '\n', '\r':
			needsQuoting, bracesUsable = true, false
		case '\\':
			needsQuoting = true
			switch {
			case i == len(token)-1:
				bracesUsable = false // would escape the closing brace
			case token[i+1] == '\n':
				bracesUsable = false
				i++
			case token[i+1] == '{' || token[i+1] == '}' || token[i+1] == '\\':
				i++ // an escaped brace does not count towards balance
			}
		}
	}
	switch {
	case nesting != 0 || !bracesUsable:
		return formEscaped
	case needsQuoting:
		return formBraced
	}
	return formBare
}

// formatElement writes token to b in the form chooseForm picks.
func formatElement(b *strings.Builder, token string, first bool) {
	if token == "" {
		b.WriteString("{}")
		return
	}
	switch chooseForm(token, first) {
	case formBare:
		b.WriteString(token)
		return
	case formBraced:
		b.WriteByte('{')
		b.WriteString(token)
		b.WriteByte('}')
		return
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		switch c {
		case ']', '[', '$', ';', ' ', '\\', '"', '{', '}':
			b.WriteByte('\\')
		case '#':
			if first && i == 0 {
				b.WriteByte('\\')
			}
		case '\f':
			b.WriteString(`\f`)
			continue
		case '\n':
			b.WriteString(`\n`)
			continue
		case '\r':
			b.WriteString(`\r`)
			continue
		case '\t':
			b.WriteString(`\t`)
			continue
		case '\v':
			b.WriteString(`\v`)
			continue
		}
		b.WriteByte(c)
	}
}
