package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"github.com/agentgate/agentgate/exec/runinfo"
)

// Bounds of one entry, so that no proposal, however long, can make the log
// grow by more than a few kilobytes per step (an agent must not be able to
// flush the history with a few huge commands). What is cut stays whole
// elsewhere: a run's argv and change summary in its run record.
const (
	// MaxArgvBytes is the most bytes of argv tokens an entry keeps; a
	// longer argv is abbreviated (Entry.ArgvSHA256 identifies it whole).
	MaxArgvBytes = 4 << 10
	// MaxStringBytes is the most bytes any other string of an entry keeps
	// (a command line, a reason, a message, a path).
	MaxStringBytes = 2 << 10
	// MaxListedChanges is the most paths an entry keeps in each list of a
	// change summary.
	MaxListedChanges = 100
	// maxChangePathBytes is the most bytes of one path in a change summary.
	maxChangePathBytes = 512
)

// ArgvDigest returns the hex SHA-256 that identifies argv whole: over each
// token followed by a NUL byte (so ["a b"] and ["a", "b"] differ).
func ArgvDigest(argv []string) string {
	h := sha256.New()
	for _, tok := range argv {
		h.Write([]byte(tok))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Bound returns e with every part cut to the bounds above, leaving e and
// what it points to unchanged. An argv longer than MaxArgvBytes keeps its
// first tokens (the last one kept cut short) and gains ArgvSHA256,
// ArgvBytes and ArgvCount; a longer string ends in "…" and a note of its
// full size and hash; a change summary keeps MaxListedChanges paths per
// list and says so in its Reason (Incomplete set). Within the bounds,
// nothing changes.
func Bound(e Entry) Entry {
	if size := ArgvSize(e.Argv); size > MaxArgvBytes && e.ArgvSHA256 == "" {
		e.ArgvSHA256, e.ArgvBytes, e.ArgvCount = ArgvDigest(e.Argv), size, len(e.Argv)
		e.Argv = abbreviateArgv(e.Argv)
	}
	for _, s := range []*string{&e.CommandLine, &e.Executable, &e.Cwd, &e.ProjectRoot, &e.PeerExe, &e.Reason,
		&e.Message, &e.Error, &e.Client, &e.Provider, &e.By, &e.Code, &e.State, &e.Decision, &e.RunID, &e.Session} {
		*s = abbreviate(*s, MaxStringBytes)
	}
	if e.Rule != nil {
		r := *e.Rule
		r.Text, r.File = abbreviate(r.Text, MaxStringBytes), abbreviate(r.File, MaxStringBytes)
		e.Rule = &r
	}
	if e.Grant != nil {
		g := *e.Grant
		g.Text = abbreviate(g.Text, MaxStringBytes)
		e.Grant = &g
	}
	if e.Changes != nil {
		e.Changes = boundChanges(e.Changes)
	}
	return e
}

// ArgvSize is the size of argv's tokens in bytes.
func ArgvSize(argv []string) int64 {
	var n int64
	for _, tok := range argv {
		n += int64(len(tok))
	}
	return n
}

// abbreviateArgv keeps argv's first tokens within MaxArgvBytes, the last
// one kept cut short, and ends with a token saying how many were left out.
func abbreviateArgv(argv []string) []string {
	var out []string
	budget := MaxArgvBytes
	for i, tok := range argv {
		if len(tok) <= budget {
			out = append(out, tok)
			budget -= len(tok)
			continue
		}
		if budget >= 64 {
			out = append(out, abbreviate(tok, budget))
			i++
		}
		if rest := len(argv) - i; rest > 0 {
			out = append(out, fmt.Sprintf("…[%d more arguments]", rest))
		}
		break
	}
	return out
}

// abbreviate returns s when it fits in max bytes; otherwise its start, cut
// at a UTF-8 boundary, then "…[N bytes, sha256 X]" naming the whole string,
// together at most max bytes (max must leave room for the note, 100 bytes).
func abbreviate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	note := fmt.Sprintf("…[%d bytes, sha256 %s]", len(s), hex.EncodeToString(sum[:]))
	keep := max - len(note)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + note
}

// boundChanges returns c, or a copy with at most MaxListedChanges paths per
// list, each at most maxChangePathBytes.
func boundChanges(c *runinfo.ChangeSummary) *runinfo.ChangeSummary {
	over := func(list []string) bool {
		if len(list) > MaxListedChanges {
			return true
		}
		for _, p := range list {
			if len(p) > maxChangePathBytes {
				return true
			}
		}
		return false
	}
	if !over(c.Created) && !over(c.Modified) && !over(c.Deleted) {
		return c
	}
	b := *c
	cut := false
	for _, list := range []*[]string{&b.Created, &b.Modified, &b.Deleted} {
		if len(*list) > MaxListedChanges {
			cut = true
		}
		kept := (*list)[:min(len(*list), MaxListedChanges)]
		out := make([]string, len(kept))
		for i, p := range kept {
			out[i] = abbreviate(p, maxChangePathBytes)
		}
		*list = out
	}
	if cut {
		b.Incomplete = true
		note := fmt.Sprintf("the audit log keeps %d paths per list; the run's record keeps them all", MaxListedChanges)
		if b.Reason != "" {
			note = b.Reason + "; " + note
		}
		b.Reason = abbreviate(note, MaxStringBytes)
	}
	return &b
}
