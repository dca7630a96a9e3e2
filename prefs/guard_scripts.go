package prefs

import (
	"slices"
	"strings"
)

// The argument guard's readers of program text: sed scripts and awk
// programs, which can run commands and write files from inside an
// argument. Both read conservatively: text they cannot follow counts as
// dangerous, so a person is asked.

// scripts returns the program texts of a sed or awk command line: the
// values of its script options (-e), or else its first operand, as argv
// indexes (at, and valueAt for a separate value or -1). fileOpts name the
// options naming a program file (-f): with one of them the first operand
// is a file to read, not a program.
func scripts(pc *parsedCmd, fileOpts ...string) (texts []string, at, valueAt []int) {
	fromOpts := false
	for _, o := range pc.opts {
		if o.opt == nil {
			continue
		}
		if o.opt.script {
			fromOpts = true
			if o.hasValue {
				texts, at, valueAt = append(texts, o.value), append(at, o.at), append(valueAt, o.valueAt)
			}
		} else if slices.Contains(fileOpts, o.name) {
			fromOpts = true
		}
	}
	if !fromOpts && len(pc.operands) > 0 {
		i := pc.operands[0]
		texts, at, valueAt = append(texts, pc.argv[i]), append(at, i), append(valueAt, -1)
	}
	return texts, at, valueAt
}

// sedCheck reports sed scripts that run a command or write a file (unless
// --sandbox forbids both).
func sedCheck(g *guardRun, pc *parsedCmd) {
	if pc.has("sandbox") {
		return
	}
	// sed joins its -e scripts with newlines before reading them: an a
	// command's text in one -e goes on into the next.
	texts, at, valueAt := scripts(pc, "f", "file")
	if len(texts) == 0 {
		return
	}
	if why := sedDanger(strings.Join(texts, "\n")); why != "" {
		last := len(texts) - 1
		for i, t := range texts {
			if sedDanger(t) != "" {
				last = i
				break
			}
		}
		g.add(at[last], valueAt[last], why)
	}
}

// sedUnreadable is sedDanger's answer for text it cannot follow.
const sedUnreadable = "holds sed text the guard cannot read, so it may run a command or write a file"

// sedDanger reads a GNU sed script and returns why it runs a command (the
// e command, the s command's e flag) or writes a file (w, W, the s
// command's w flag, except to /dev/stdout and /dev/stderr), or "" when it
// does neither. Addresses, blocks, labels, a/i/c text and y are followed;
// a regular expression's bracket expressions may hold the delimiter, as in
// GNU sed. Anything else unexpected is answered with sedUnreadable.
func sedDanger(s string) string {
	i := 0
	for {
		for i < len(s) && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return ""
		}
		if s[i] == '#' {
			i = lineEnd(s, i)
			continue
		}
		var ok bool
		if i, ok = sedAddress(s, i); !ok {
			return sedUnreadable
		}
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i < len(s) && s[i] == ',' {
			i++
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i, ok = sedAddress(s, i); !ok {
				return sedUnreadable
			}
		}
		for i < len(s) && strings.IndexByte(" \t!", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return sedUnreadable
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'l', 'L':
			for i < len(s) && (s[i] == ' ' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			// A label ends at blank space, a semicolon or a newline (GNU
			// sed 4.9: in `b x p`, p is the next command).
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			for i < len(s) && strings.IndexByte(" \t\n;", s[i]) < 0 {
				i++
			}
		case 'a', 'i', 'c':
			i = textEnd(s, i)
		case 'r', 'R':
			i = lineEnd(s, i)
		case 'w', 'W':
			if why := sedWrite(s[i:lineEnd(s, i)]); why != "" {
				return why
			}
			i = lineEnd(s, i)
		case 'e':
			return "runs a shell command (the sed e command)"
		case 's':
			var why string
			if i, why = sedSubstitute(s, i); why != "" {
				return why
			}
		case 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				return sedUnreadable
			}
			var ok1, ok2 bool
			d := s[i]
			i, ok1 = sedDelimited(s, i+1, d, false)
			i, ok2 = sedDelimited(s, i, d, false)
			if !ok1 || !ok2 {
				return sedUnreadable
			}
		default:
			return sedUnreadable
		}
	}
}

// sedWrite returns why writing to the file named by the rest of a w
// command (or flag) is dangerous, "" for standard output and error.
func sedWrite(rest string) string {
	switch strings.TrimSpace(rest) {
	case "/dev/stdout", "/dev/stderr":
		return ""
	}
	return "writes to a file anywhere (the sed w command or flag)"
}

// sedSubstitute reads an s command from s[i] (the delimiter) and returns
// the index after it and why it runs or writes, if it does.
func sedSubstitute(s string, i int) (int, string) {
	if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
		return i, sedUnreadable
	}
	d := s[i]
	var ok1, ok2 bool
	i, ok1 = sedDelimited(s, i+1, d, true)
	i, ok2 = sedDelimited(s, i, d, false)
	if !ok1 || !ok2 {
		return i, sedUnreadable
	}
	for i < len(s) {
		switch c := s[i]; {
		case c == 'g' || c == 'p' || c == 'i' || c == 'I' || c == 'm' || c == 'M' || c >= '0' && c <= '9':
			i++
		case c == 'e':
			return i, "runs the pattern space as a shell command (the s command's e flag)"
		case c == 'w':
			end := lineEnd(s, i)
			if why := sedWrite(s[i+1 : end]); why != "" {
				return i, why
			}
			return end, ""
		case strings.IndexByte(" \t\n;}#", c) >= 0:
			return i, ""
		default:
			return i, sedUnreadable
		}
	}
	return i, ""
}

// sedAddress skips an address at s[i] (none, a line number with an
// optional ~step, $, +N, ~N, /regex/ or \cregexc with I and M flags) and
// reports whether it was readable.
func sedAddress(s string, i int) (int, bool) {
	if i >= len(s) {
		return i, true
	}
	switch c := s[i]; {
	case c >= '0' && c <= '9' || c == '+' || c == '~':
		i++
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
			i++
		}
		return i, true
	case c == '$':
		return i + 1, true
	case c == '/' || c == '\\':
		d := byte('/')
		if c == '\\' {
			if i+1 >= len(s) || s[i+1] == '\n' {
				return i, false
			}
			d = s[i+1]
			i++
		}
		var ok bool
		if i, ok = sedDelimited(s, i+1, d, true); !ok {
			return i, false
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return i, true
	}
	return i, true
}

// sedDelimited skips text up to and including the unescaped delimiter d,
// starting at s[i]; in a regular expression (regex true) a bracket
// expression may hold d. It reports whether the delimiter was found.
func sedDelimited(s string, i int, d byte, regex bool) (int, bool) {
	for i < len(s) {
		switch c := s[i]; {
		case c == '\\':
			i += 2
		case c == d:
			return i + 1, true
		case c == '[' && regex:
			end, ok := bracketEnd(s, i)
			if !ok {
				return i, false
			}
			i = end
		default:
			i++
		}
	}
	return i, false
}

// bracketEnd returns the index after the bracket expression starting at
// s[i] ('['), handling a leading ^ and ], and [:class:], [.coll.], [=equiv=].
func bracketEnd(s string, i int) (int, bool) {
	i++
	if i < len(s) && s[i] == '^' {
		i++
	}
	if i < len(s) && s[i] == ']' {
		i++
	}
	for i < len(s) {
		switch {
		case s[i] == ']':
			return i + 1, true
		case s[i] == '[' && i+1 < len(s) && strings.IndexByte(":.=", s[i+1]) >= 0:
			closing := string([]byte{s[i+1], ']'})
			j := strings.Index(s[i+2:], closing)
			if j < 0 {
				return i, false
			}
			i += 2 + j + 2
		default:
			i++
		}
	}
	return i, false
}

// lineEnd returns the index of the newline ending the line at s[i], or
// len(s).
func lineEnd(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(s)
}

// textEnd returns where a/i/c text starting at s[i] ends: at a newline not
// escaped by a backslash.
func textEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
		case '\n':
			return i
		default:
			i++
		}
	}
	return len(s)
}

// awkCheck reports awk programs that run a command (system(), a pipe to
// or from a command) or write a file (print > file), unless --sandbox.
func awkCheck(g *guardRun, pc *parsedCmd) {
	if pc.has("S", "sandbox") {
		return
	}
	texts, at, valueAt := scripts(pc, "f", "file", "E", "exec")
	for i, t := range texts {
		if why := awkDanger(t); why != "" {
			g.add(at[i], valueAt[i], why)
		}
	}
}

// awkDanger reads an awk program and returns why it runs a command or
// writes a file, or "" when it does neither. It tokenises strings, regular
// expressions (told from division by the token before), comments and
// identifiers, and reports: a call of system; | and |& outside strings and
// regexes (print | "cmd", "cmd" | getline; || is or); > and >> at the
// level of a print or printf statement (a redirection to a file, unless
// the target is the string "/dev/stdout" or "/dev/stderr"); @ (gawk's
// @load, @include and indirect calls, which can reach system); and an
// unterminated string or regex.
func awkDanger(s string) string {
	type printState struct{ depth int }
	var prints []printState // open print statements, by paren depth
	depth := 0
	operand := false   // the previous token ends an operand (so / divides)
	continues := false // the previous token continues the statement on the next line
	for i := 0; i < len(s); {
		c := s[i]
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			continues = false
		}
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '\\' && i+1 < len(s) && s[i+1] == '\n':
			i += 2
			continue
		case c == '\n' && continues:
			// A statement goes on after , && || and an opening brace.
			i++
			continue
		case c == '\n' || c == ';' || c == '{' || c == '}':
			prints = prints[:0]
			i, operand, continues = i+1, false, c == '{'
			continue
		case c == ',':
			i, operand, continues = i+1, false, true
			continue
		case c == '&' && i+1 < len(s) && s[i+1] == '&':
			i, operand, continues = i+2, false, true
			continue
		case c == '#':
			i = lineEnd(s, i)
			continue
		case c == '"':
			end, ok := awkString(s, i)
			if !ok {
				return "holds an unterminated string the guard cannot read"
			}
			i, operand = end, true
			continue
		case c == '/' && !operand:
			end, ok := awkRegex(s, i)
			if !ok {
				return "holds an unterminated regular expression the guard cannot read"
			}
			i, operand = end, true
			continue
		case c == '@':
			return "uses @ (gawk's @load, @include or an indirect call, which can run any function)"
		case c == '|':
			if i+1 < len(s) && s[i+1] == '|' {
				i, operand, continues = i+2, false, true
				continue
			}
			return "pipes to or from a command with | (print | \"cmd\", \"cmd\" | getline)"
		case c == '(':
			depth++
			i, operand = i+1, false
			continue
		case c == ')':
			depth--
			i, operand = i+1, true
			continue
		case c == '>':
			j := i + 1
			if j < len(s) && s[j] == '=' {
				i, operand = j+1, false
				continue
			}
			if n := len(prints); n > 0 && prints[n-1].depth == depth {
				if j < len(s) && s[j] == '>' {
					j++
				}
				for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
					j++
				}
				if strings.HasPrefix(s[j:], `"/dev/stdout"`) || strings.HasPrefix(s[j:], `"/dev/stderr"`) {
					i, operand = j, false
					continue
				}
				return "writes output to a file with print > file"
			}
			i, operand = i+1, false
			continue
		case isAwkIdentStart(c):
			j := i
			for j < len(s) && (isAwkIdentStart(s[j]) || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			word := s[i:j]
			k := j
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			switch word {
			case "system":
				return "runs a shell command with system()"
			case "print", "printf":
				prints = append(prints, printState{depth: depth})
				operand = false
			case "getline", "in", "return", "if", "while", "for", "do", "else", "delete", "case", "default", "BEGIN", "END", "function", "func", "exit", "next", "nextfile":
				operand, continues = false, word == "do" || word == "else"
			default:
				operand = true
			}
			i = j
			continue
		case c >= '0' && c <= '9' || c == '.':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == 'x' || s[i] == 'X' || s[i] >= 'a' && s[i] <= 'f' || s[i] >= 'A' && s[i] <= 'F') {
				i++
			}
			operand = true
			continue
		case c == ']' || c == '$':
			i, operand = i+1, c == ']'
			continue
		case c == '+' || c == '-':
			if i+1 < len(s) && s[i+1] == c {
				// ++ and -- keep what came before: x++ / 2 divides.
				i += 2
				continue
			}
			i, operand = i+1, false
			continue
		}
		i, operand = i+1, false
	}
	return ""
}

// isAwkIdentStart reports whether c starts an awk identifier.
func isAwkIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// awkString returns the index after the string starting at s[i] ('"').
func awkString(s string, i int) (int, bool) {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		case '\n':
			return i, false
		}
	}
	return i, false
}

// awkRegex returns the index after the regular expression starting at
// s[i] ('/'), whose bracket expressions may hold a /.
func awkRegex(s string, i int) (int, bool) {
	for i++; i < len(s); {
		switch s[i] {
		case '\\':
			i += 2
		case '/':
			return i + 1, true
		case '\n':
			return i, false
		case '[':
			end, ok := bracketEnd(s, i)
			if !ok {
				return i, false
			}
			i = end
		default:
			i++
		}
	}
	return i, false
}
