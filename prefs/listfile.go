package prefs

import (
	"bytes"
	"fmt"
	"slices"
)

// Rule is one line of an allow-list: a command is allowed by it when the
// command's argv starts with Tokens, compared exactly.
type Rule struct {
	// Tokens is the argv prefix the rule allows; never empty.
	Tokens []string
	// Scope is the kind of file the rule lives in.
	Scope Scope
	// Provider is the provider's name for ScopeProvider, else empty.
	Provider string
	// Project is the project root for ScopeProject, else empty.
	Project string
	// File is the allow-list file holding the rule.
	File string
	// Line is the rule's 1-based line number in File.
	Line int
	// Active is false for a project rule no person has confirmed (see
	// Store.Trust); such a rule allows nothing. Global and provider rules are
	// always active.
	Active bool
}

// ParseError reports a line of an allow-list that is not a valid Tcl list.
// The line is skipped; the file's other rules still apply.
type ParseError struct {
	// File is the allow-list file; empty when the text came from elsewhere.
	File string
	// Line is the 1-based line number in File; 0 when not from a file.
	Line int
	// Column is the 1-based position in the line, counted in characters.
	Column int
	// Reason says what is wrong, in Tcl's words.
	Reason string
}

// Error returns "file:line:col: reason", leaving out the file and line when
// they are not known ("col 7: reason").
func (e *ParseError) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Reason)
	case e.Line > 0:
		return fmt.Sprintf("line %d:%d: %s", e.Line, e.Column, e.Reason)
	}
	return fmt.Sprintf("col %d: %s", e.Column, e.Reason)
}

// fileLine is one line of an allow-list file as stored.
type fileLine struct {
	// text is the line without its line ending (a final \r of CRLF removed).
	text []byte
	// start and end are the byte offsets of the line in the file, end
	// including its line ending when it has one.
	start, end int
}

// splitFileLines cuts content into lines at "\n". A final line without a
// line ending is a line; the empty tail after a final "\n" is not.
func splitFileLines(content []byte) []fileLine {
	var lines []fileLine
	for start := 0; start < len(content); {
		end := len(content)
		if i := bytes.IndexByte(content[start:], '\n'); i >= 0 {
			end = start + i + 1
		}
		text := bytes.TrimSuffix(bytes.TrimSuffix(content[start:end], []byte("\n")), []byte("\r"))
		lines = append(lines, fileLine{text: text, start: start, end: end})
		start = end
	}
	return lines
}

// isCommentOrBlank reports whether a line holds no rule: only list white
// space, or a first non-white-space character '#'.
func isCommentOrBlank(text []byte) bool {
	for _, c := range text {
		if !isListSpace(c) {
			return c == '#'
		}
	}
	return true
}

// parsedLine is a rule read from a file, before scope information is added.
type parsedLine struct {
	// tokens are the rule's tokens.
	tokens []string
	// line is the 1-based line number.
	line int
}

// parseListFile reads every rule of an allow-list file's content. Comment and
// blank lines are skipped; a malformed line becomes a ParseError (with Line
// set and File left for the caller) and is skipped too.
func parseListFile(content []byte) ([]parsedLine, []ParseError) {
	var rules []parsedLine
	var errs []ParseError
	for i, l := range splitFileLines(content) {
		if isCommentOrBlank(l.text) {
			continue
		}
		tokens, err := ParseList(string(l.text))
		if err != nil {
			pe := *err.(*ParseError)
			pe.Line = i + 1
			errs = append(errs, pe)
			continue
		}
		rules = append(rules, parsedLine{tokens: tokens, line: i + 1})
	}
	return rules, errs
}

// lineEnding returns the line ending content uses: "\r\n" when its first line
// ends that way, else "\n".
func lineEnding(content []byte) string {
	if i := bytes.IndexByte(content, '\n'); i > 0 && content[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// appendRuleLine returns content with line added as a new last line, keeping
// every existing byte: after a final line ending it adds line plus the file's
// line ending; after a last line without one it adds the line ending first
// and leaves the new line without one, as the file was.
func appendRuleLine(content []byte, line string) []byte {
	out := slices.Clone(content)
	eol := lineEnding(content)
	if len(content) == 0 || content[len(content)-1] == '\n' {
		return append(append(out, line...), eol...)
	}
	return append(append(out, eol...), line...)
}

// removeRuleLines returns content without every line that parses to exactly
// tokens, keeping all other bytes, and the number of lines removed. When the
// file had no final line ending, the result has none either.
func removeRuleLines(content []byte, tokens []string) ([]byte, int) {
	var out []byte
	removed := 0
	for _, l := range splitFileLines(content) {
		if !isCommentOrBlank(l.text) {
			if got, err := ParseList(string(l.text)); err == nil && slices.Equal(got, tokens) {
				removed++
				continue
			}
		}
		out = append(out, content[l.start:l.end]...)
	}
	if removed > 0 && len(content) > 0 && content[len(content)-1] != '\n' {
		// The last line went: drop the line ending now closing the file.
		if bytes.HasSuffix(out, []byte("\r\n")) {
			out = out[:len(out)-2]
		} else if bytes.HasSuffix(out, []byte("\n")) {
			out = out[:len(out)-1]
		}
	}
	return out, removed
}

// containsRule reports whether content has a line that parses to tokens.
func containsRule(content []byte, tokens []string) bool {
	rules, _ := parseListFile(content)
	for _, r := range rules {
		if slices.Equal(r.tokens, tokens) {
			return true
		}
	}
	return false
}
