// Package display renders an argv as text a person reads: on the approval
// card, at the terminal prompt, in `agentgate` output and in logs.
//
// The display form has two properties at once:
//
//   - Pasted into a POSIX shell it gives back the same argv, for every argv
//     whose tokens hold only printable text (see Word for the exact rule).
//   - Nothing is hidden: every control, invisible, zero-width and
//     bidirectional-override character, and every byte that is not valid
//     UTF-8, is shown as a visible escape, so what a person approves is
//     what they see.
//
// The package imports nothing but the standard library, so the
// latency-critical hook path can use it cheaply.
package display

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Command returns the display form of argv: Word of each token, joined by
// single spaces. An empty or nil argv gives "".
//
// A token in the command position is treated like any other: Word already
// quotes the forms a shell would read specially there (assignments such as
// FOO=bar, reserved words such as if or time), so the first word stays the
// program name when the result is pasted into a shell.
func Command(argv []string) string {
	var b strings.Builder
	for i, s := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		writeWord(&b, s)
	}
	return b.String()
}

// Word returns the display form of one token. The rule, applied in order:
//
//  1. s holds a character that must be shown escaped (see NeedsEscape): the
//     whole token is written in bash's $'…' quoting. Inside it a backslash
//     is written \\ and a single quote \'; a newline \n, a tab \t and a
//     carriage return \r; every other C0 control character and DEL as \xHH
//     (for example \x1b); a byte that is not part of valid UTF-8 as \xHH of
//     that byte (for example \xff); every other escaped character as \uHHHH,
//     or \UHHHHHHHH above U+FFFF, always with all digits and lower-case hex
//     (for example \u202e). Every remaining character is written as is.
//     bash, zsh and ksh93 read this form back to the same bytes; bash turns
//     \u escapes into characters only in a UTF-8 locale (elsewhere it keeps
//     the escape text, which is still visible and harmless). A NUL byte
//     (\x00), which no argv can carry, is shown but ends the word for a shell.
//  2. s is non-empty, consists only of ASCII letters, digits and the
//     characters _ @ % + = : , . / -, does not start with = (zsh expands
//     =name to a path), is not an assignment (a name made of letters, digits
//     and underscores followed by =) and is not a shell reserved word: it is
//     written bare.
//  3. Otherwise (the empty token, spaces, quotes, shell operators and
//     metacharacters, globs, a leading ~ or #, reserved words, printable
//     non-ASCII text) it is written in single quotes, each ' inside written
//     as the four characters quote, backslash, quote, quote (close the
//     quotes, an escaped quote, reopen).
//
// Forms 2 and 3 read back to s in every POSIX shell.
func Word(s string) string {
	var b strings.Builder
	writeWord(&b, s)
	return b.String()
}

// NeedsEscape reports whether r is shown escaped by Word: a C0 control
// character (U+0000–U+001F), DEL (U+007F), a C1 control character
// (U+0080–U+009F), any character that is not printable by unicode.IsPrint
// other than the ASCII space — this covers the format characters (Cf: soft
// hyphen U+00AD, zero-width and direction marks U+200B–U+200F, the
// bidirectional embeddings and overrides U+202A–U+202E, the isolates
// U+2066–U+2069, the byte-order mark U+FEFF, the tag characters, …), the
// line and paragraph separators (U+2028, U+2029), every space other than
// U+0020 (such as the no-break space U+00A0), private-use characters and
// unassigned code points — and the characters that print as nothing though
// Unicode classes them as letters or marks (see invisibleFillers), such as
// the combining grapheme joiner U+034F, the Hangul fillers and the
// variation selectors. utf8.RuneError itself (U+FFFD, a visible glyph) is
// not escaped when it is encoded validly.
func NeedsEscape(r rune) bool {
	if r == ' ' {
		return false
	}
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f
	}
	if !unicode.IsPrint(r) {
		return true
	}
	return unicode.Is(invisibleFillers, r)
}

// invisibleFillers are printable-classed characters that render as blank or
// not at all, so a person could not see them in a command.
var invisibleFillers = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x034f, Hi: 0x034f, Stride: 1}, // combining grapheme joiner
		{Lo: 0x115f, Hi: 0x1160, Stride: 1}, // Hangul choseong/jungseong fillers
		{Lo: 0x17b4, Hi: 0x17b5, Stride: 1}, // Khmer inherent vowels
		{Lo: 0x180b, Hi: 0x180f, Stride: 1}, // Mongolian variation selectors, vowel separator
		{Lo: 0x2800, Hi: 0x2800, Stride: 1}, // braille pattern blank
		{Lo: 0x3164, Hi: 0x3164, Stride: 1}, // Hangul filler
		{Lo: 0xfe00, Hi: 0xfe0f, Stride: 1}, // variation selectors
		{Lo: 0xffa0, Hi: 0xffa0, Stride: 1}, // halfwidth Hangul filler
	},
	R32: []unicode.Range32{
		{Lo: 0x1d159, Hi: 0x1d159, Stride: 1}, // musical symbol null notehead
		{Lo: 0xe0100, Hi: 0xe01ef, Stride: 1}, // variation selectors supplement
	},
}

// reservedWords are the words a POSIX shell, bash or zsh reads specially in
// the command position; Word quotes them so argv[0] stays a program name.
var reservedWords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true,
	"case": true, "esac": true, "for": true, "select": true, "while": true,
	"until": true, "do": true, "done": true, "in": true, "function": true,
	"time": true, "coproc": true, "foreach": true, "end": true, "repeat": true,
	"nocorrect": true, "noglob": true,
}

func writeWord(b *strings.Builder, s string) {
	switch {
	case needsEscapedForm(s):
		writeEscaped(b, s)
	case isBare(s):
		b.WriteString(s)
	default:
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(s, "'", `'\''`))
		b.WriteByte('\'')
	}
}

// needsEscapedForm reports whether s holds invalid UTF-8 or a rune for which
// NeedsEscape is true.
func needsEscapedForm(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return true
		}
		if NeedsEscape(r) {
			return true
		}
		i += size
	}
	return false
}

// isBare reports whether s may be written without quotes (rule 2 of Word).
func isBare(s string) bool {
	if s == "" || s[0] == '=' || reservedWords[s] {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !bareByte(s[i]) {
			return false
		}
	}
	return !isAssignment(s)
}

func bareByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("_@%+=:,./-", c) >= 0
}

// isAssignment reports whether s has the shape NAME=… that a shell reads as
// a variable assignment before a command.
func isAssignment(s string) bool {
	eq := strings.IndexByte(s, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
		if !letter && !(i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// writeEscaped writes s in bash $'…' quoting (rule 1 of Word).
func writeEscaped(b *strings.Builder, s string) {
	b.WriteString("$'")
	writeVisible(b, s, true)
	b.WriteByte('\'')
}

// writeVisible writes s with every character NeedsEscape reports, and
// every byte that is not valid UTF-8, as a visible escape: \n, \t, \r,
// \xHH for the other C0 controls, DEL and invalid bytes, \uHHHH or
// \UHHHHHHHH for the rest. inQuotes also escapes backslash and single
// quote, as the inside of bash $'…' quoting needs.
func writeVisible(b *strings.Builder, s string, inQuotes bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHexByte(b, s[i])
		case inQuotes && r == '\\':
			b.WriteString(`\\`)
		case inQuotes && r == '\'':
			b.WriteString(`\'`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			writeHexByte(b, byte(r))
		case NeedsEscape(r):
			writeUnicode(b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
}

// Text returns s for a person to read on one line, in a terminal or a
// log: every character Word would escape (NeedsEscape, and every byte that
// is not valid UTF-8) is written as a visible escape — \n, \t, \r, \xHH
// for the other C0 controls, DEL and invalid bytes, \uHHHH or \UHHHHHHHH
// for the rest — and everything else as is. Unlike Word it adds no quotes
// and leaves backslashes alone, so it suits paths, names and messages;
// argv is shown with Command or Word.
func Text(s string) string {
	if !needsEscapedForm(s) {
		return s
	}
	var b strings.Builder
	writeVisible(&b, s, false)
	return b.String()
}

func writeHexByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

func writeUnicode(b *strings.Builder, r rune) {
	digits := 4
	if r > 0xffff {
		b.WriteString(`\U`)
		digits = 8
	} else {
		b.WriteString(`\u`)
	}
	for shift := (digits - 1) * 4; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(r>>shift)&0xf])
	}
}
