package audit

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/exec/runinfo"
)

// The audit log is written on every hook call, where the reflection of
// encoding/json cost a measurable share of the hook's start-up budget
// (SPEC §9), so entries are encoded by hand. The output is byte for byte
// what json.Marshal writes for Entry (field order, omitempty, the RFC 3339
// time, HTML-safe string escapes) with every rune display.NeedsEscape flags
// written as a \u escape; the tests keep json.Marshal as the oracle.

// appendEntry appends e as one JSON object (without a newline) to dst. It
// fails only when e.Time cannot be written as RFC 3339 (a year outside
// 0…9999, a zone offset of 24 hours or more), as json.Marshal does.
func appendEntry(dst []byte, e *Entry) ([]byte, error) {
	dst = append(dst, `{"time":"`...)
	dst, err := e.Time.AppendText(dst)
	if err != nil {
		return nil, fmt.Errorf("encode an audit entry: %w", err)
	}
	dst = append(dst, `","kind":`...)
	dst = appendString(dst, string(e.Kind))
	dst = appendStringField(dst, `,"run_id":`, e.RunID)
	dst = appendStringField(dst, `,"session":`, e.Session)
	dst = appendStringField(dst, `,"host":`, e.Host)
	dst = appendStringField(dst, `,"provider":`, e.Provider)
	dst = appendStringField(dst, `,"client":`, e.Client)
	if e.PeerUID != nil {
		dst = strconv.AppendInt(append(dst, `,"peer_uid":`...), int64(*e.PeerUID), 10)
	}
	dst = appendIntField(dst, `,"peer_pid":`, int64(e.PeerPID))
	dst = appendStringField(dst, `,"peer_exe":`, e.PeerExe)
	if len(e.Argv) > 0 {
		dst = appendStrings(append(dst, `,"argv":`...), e.Argv)
	}
	dst = appendStringField(dst, `,"argv_sha256":`, e.ArgvSHA256)
	dst = appendIntField(dst, `,"argv_bytes":`, e.ArgvBytes)
	dst = appendIntField(dst, `,"argv_count":`, int64(e.ArgvCount))
	dst = appendStringField(dst, `,"command_line":`, e.CommandLine)
	if e.ThroughAgentShell {
		dst = append(dst, `,"through_agent_shell":true`...)
	}
	dst = appendStringField(dst, `,"executable":`, e.Executable)
	dst = appendStringField(dst, `,"cwd":`, e.Cwd)
	dst = appendStringField(dst, `,"project_root":`, e.ProjectRoot)
	dst = appendIntField(dst, `,"timeout_ms":`, e.TimeoutMS)
	dst = appendIntField(dst, `,"stdin_bytes":`, int64(e.StdinBytes))
	dst = appendStringField(dst, `,"stdin_sha256":`, e.StdinSHA256)
	dst = appendStringField(dst, `,"reason":`, e.Reason)
	dst = appendStringField(dst, `,"decision":`, e.Decision)
	if e.Rule != nil {
		dst = appendRule(append(dst, `,"rule":`...), e.Rule)
	}
	if e.Grant != nil {
		dst = appendGrant(append(dst, `,"grant":`...), e.Grant)
	}
	dst = appendStringField(dst, `,"by":`, e.By)
	dst = appendStringField(dst, `,"message":`, e.Message)
	dst = appendStringField(dst, `,"code":`, e.Code)
	dst = appendIntField(dst, `,"pid":`, int64(e.PID))
	dst = appendStringField(dst, `,"state":`, e.State)
	if e.ExitCode != nil {
		dst = strconv.AppendInt(append(dst, `,"exit_code":`...), int64(*e.ExitCode), 10)
	}
	dst = appendIntField(dst, `,"duration_ms":`, e.DurationMS)
	dst = appendIntField(dst, `,"stdout_bytes":`, e.StdoutBytes)
	dst = appendIntField(dst, `,"stderr_bytes":`, e.StderrBytes)
	if e.Changes != nil {
		if dst, err = appendChanges(append(dst, `,"changes":`...), e.Changes); err != nil {
			return nil, fmt.Errorf("encode an audit entry: %w", err)
		}
	}
	if e.WithoutWriteConfinement {
		dst = append(dst, `,"without_write_confinement":true`...)
	}
	if e.Confinement != nil {
		dst = appendConfinement(append(dst, `,"confinement":`...), e.Confinement)
	}
	if len(e.ProtectedChanged) > 0 {
		dst = appendStrings(append(dst, `,"protected_changed":`...), e.ProtectedChanged)
	}
	dst = appendStringField(dst, `,"error":`, e.Error)
	dst = appendIntField(dst, `,"count":`, int64(e.Count))
	if !e.Since.IsZero() {
		dst = append(dst, `,"since":"`...)
		if dst, err = e.Since.AppendText(dst); err != nil {
			return nil, fmt.Errorf("encode an audit entry: %w", err)
		}
		dst = append(dst, '"')
	}
	return append(dst, '}'), nil
}

// appendConfinement appends c as a JSON object (runinfo.Confinement's json
// tags, every field omitempty).
func appendConfinement(dst []byte, c *runinfo.Confinement) []byte {
	start := len(dst)
	dst = append(dst, '{')
	if len(c.Writes) > 0 {
		dst = appendStrings(append(dst, `,"writes":`...), c.Writes)
	}
	dst = appendStringField(dst, `,"unconfined":`, c.Unconfined)
	if len(c.Dropped) > 0 {
		dst = appendStrings(append(dst, `,"dropped":`...), c.Dropped)
	}
	dst = appendStringField(dst, `,"protected":`, c.Protected)
	dst = appendStringField(dst, `,"network":`, c.Network)
	dst = appendStringField(dst, `,"network_by":`, c.NetworkBy)
	dst = appendIntField(dst, `,"landlock":`, int64(c.Landlock))
	if c.Scoped {
		dst = append(dst, `,"scoped":true`...)
	}
	if len(dst) > start+1 {
		dst = append(dst[:start+1], dst[start+2:]...) // the first field's comma
	}
	return append(dst, '}')
}

// appendRule appends r as a JSON object (Rule's json tags).
func appendRule(dst []byte, r *Rule) []byte {
	dst = appendString(append(dst, `{"text":`...), r.Text)
	dst = appendString(append(dst, `,"scope":`...), r.Scope)
	dst = appendStringField(dst, `,"provider":`, r.Provider)
	dst = appendString(append(dst, `,"file":`...), r.File)
	dst = strconv.AppendInt(append(dst, `,"line":`...), int64(r.Line), 10)
	return append(dst, '}')
}

// appendGrant appends g as a JSON object (Grant's json tags).
func appendGrant(dst []byte, g *Grant) []byte {
	dst = appendString(append(dst, `{"id":`...), g.ID)
	dst = appendString(append(dst, `,"kind":`...), g.Kind)
	dst = appendString(append(dst, `,"text":`...), g.Text)
	dst = appendString(append(dst, `,"by":`...), g.By)
	if g.UntilQuit {
		dst = append(dst, `,"until_quit":true`...)
	}
	dst = appendIntField(dst, `,"left_ms":`, g.LeftMS)
	return append(dst, '}')
}

// appendChanges appends c as a JSON object (runinfo.ChangeSummary's json
// tags): a nil list is null, an empty one []. It fails as appendEntry does
// on a cover time RFC 3339 cannot hold.
func appendChanges(dst []byte, c *runinfo.ChangeSummary) ([]byte, error) {
	dst = appendStrings(append(dst, `{"created":`...), c.Created)
	dst = appendStrings(append(dst, `,"modified":`...), c.Modified)
	dst = appendStrings(append(dst, `,"deleted":`...), c.Deleted)
	if c.Incomplete {
		dst = append(dst, `,"incomplete":true`...)
	}
	dst = appendStringField(dst, `,"reason":`, c.Reason)
	dst = appendString(append(dst, `,"method":`...), c.Method)
	if c.Cover != nil {
		var err error
		if dst, err = appendCover(append(dst, `,"cover":`...), c.Cover); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendCover appends c as a JSON object (runinfo.ChangeCover's json tags).
func appendCover(dst []byte, c *runinfo.ChangeCover) ([]byte, error) {
	dst = strconv.AppendInt(append(dst, `{"entries":`...), int64(c.Entries), 10)
	if len(c.Skipped) > 0 {
		dst = appendStrings(append(dst, `,"skipped":`...), c.Skipped)
	}
	var err error
	dst = append(dst, `,"from":"`...)
	if dst, err = c.From.AppendText(dst); err != nil {
		return nil, err
	}
	dst = append(dst, `","to":"`...)
	if dst, err = c.To.AppendText(dst); err != nil {
		return nil, err
	}
	dst = append(dst, `","watched":`...)
	dst = strconv.AppendBool(dst, c.Watched)
	return append(dst, '}'), nil
}

// appendStringField appends key (`,"name":`) and s, or nothing when s is
// empty (omitempty).
func appendStringField(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return appendString(append(dst, key...), s)
}

// appendIntField appends key (`,"name":`) and n, or nothing when n is 0
// (omitempty).
func appendIntField(dst []byte, key string, n int64) []byte {
	if n == 0 {
		return dst
	}
	return strconv.AppendInt(append(dst, key...), n, 10)
}

// appendStrings appends list as a JSON array of strings; nil is null.
func appendStrings(dst []byte, list []string) []byte {
	if list == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// lowerHex are the digits of \u escapes (lower case, as encoding/json).
const lowerHex = "0123456789abcdef"

// asciiVerbatim marks the ASCII bytes a JSON string holds as themselves:
// everything from space up to '~', except '"' and '\\' (which JSON requires
// escaped) and '<', '>' and '&' (which encoding/json escapes so the text is
// safe inside HTML). DEL is a control character: escaped, like the others.
var asciiVerbatim = func() (set [utf8.RuneSelf]bool) {
	for c := ' '; c < 0x7f; c++ {
		set[c] = true
	}
	for _, c := range `"\<>&` {
		set[c] = false
	}
	return set
}()

// appendString appends s as a JSON string, escaped exactly as
// encoding/json does by default followed by the audit log's rule:
//   - '"' and '\\' as \" and \\; \b, \f, \n, \r and \t as themselves; the
//     other ASCII controls, DEL and '<', '>', '&' as \u00XX;
//   - each byte that is not part of valid UTF-8 as \ufffd;
//   - U+2028, U+2029 and every other rune display.NeedsEscape flags
//     (invisible, bidirectional, unprintable) as \uXXXX, above U+FFFF as a
//     UTF-16 surrogate pair, so that cat or less shows them instead of
//     obeying them;
//   - every other rune as its UTF-8 bytes.
//
// Decoding the result gives s back, with invalid bytes as U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is pending, to be copied verbatim
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiVerbatim[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = appendEscape(dst, rune(c))
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029' || display.NeedsEscape(r):
			dst = append(dst, s[start:i]...)
			if r > 0xFFFF {
				r -= 0x10000
				dst = appendEscape(dst, 0xD800+(r>>10))
				dst = appendEscape(dst, 0xDC00+(r&0x3FF))
			} else {
				dst = appendEscape(dst, r)
			}
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendEscape appends the JSON escape \uXXXX of the UTF-16 code unit u.
func appendEscape(dst []byte, u rune) []byte {
	return append(dst, '\\', 'u', lowerHex[u>>12&0xF], lowerHex[u>>8&0xF], lowerHex[u>>4&0xF], lowerHex[u&0xF])
}
