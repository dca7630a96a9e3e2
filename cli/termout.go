package cli

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agentgate/agentgate/exec/display"
)

// termWriter writes agentgate's own messages for a person (rules, paths,
// audit lines, prompts, errors) with every control, invisible and
// bidirectional character shown as a visible escape, as the approval card
// shows them (display.Text); only newline and tab keep their meaning, since
// the messages are laid out with them. So nothing an agent put into a rule,
// a file name, a path or a message — a terminal escape sequence, a
// right-to-left override, a carriage return — can rewrite or hide what the
// person reads. A run's own output is not agentgate's and is never passed
// through it (env.rawStdout, env.rawStderr).
type termWriter struct {
	// w is the terminal (or whatever stdout or stderr is).
	w io.Writer
}

// Write writes p escaped and reports len(p) written when the escaped text
// was. A character split across two writes shows as escaped bytes.
func (t termWriter) Write(p []byte) (int, error) {
	s := string(p)
	if !needsTermEscape(s) {
		return t.w.Write(p)
	}
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		for j, field := range strings.Split(line, "\t") {
			if j > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(display.Text(field))
		}
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// needsTermEscape reports whether s holds a character termWriter escapes.
func needsTermEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || display.NeedsEscape(r) {
			return true
		}
		i += size
	}
	return false
}
