package cli

import (
	"fmt"
	"strings"
)

// unifiedDiff returns the differences from a to b as a unified diff with
// three lines of context, headed by "--- aName" and "+++ bName", or "" when
// they are equal. A last line without a newline is marked as diff marks it.
//
// It trims the common head and tail and runs a longest-common-subsequence
// match on what is left, which is small for the edits agentgate makes (cost
// is the product of the changed region's line counts).
func unifiedDiff(aName, bName string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	al, bl := splitLines(string(a)), splitLines(string(b))
	ops := diffLines(al, bl)
	const context = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	// Group ops into hunks: runs of changes with up to 2*context equal lines
	// between them.
	i := 0
	for i < len(ops) {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := i - context
		if start < 0 {
			start = 0
		}
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end += min(context, run-end)
				break
			}
			end = run
		}
		aStart, bStart, aCount, bCount := ops[start].aLine, ops[start].bLine, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aCount++
			}
			if op.kind != '-' {
				bCount++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.text)
			if !strings.HasSuffix(op.text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

// hunkRange formats a hunk's start,count as diff does (1-based; an empty
// range names the line before it).
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// diffOp is one line of a diff: ' ' kept, '-' removed, '+' added; aLine and
// bLine are the 0-based line numbers it sits at in each file.
type diffOp struct {
	kind         byte
	text         string
	aLine, bLine int
}

// splitLines splits s after each newline, keeping the newlines.
func splitLines(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// diffLines returns the edit script turning a into b.
func diffLines(a, b []string) []diffOp {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	am, bm := a[head:len(a)-tail], b[head:len(b)-tail]
	// lcs[i][j] is the LCS length of am[i:] and bm[j:].
	lcs := make([][]int, len(am)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(bm)+1)
	}
	for i := len(am) - 1; i >= 0; i-- {
		for j := len(bm) - 1; j >= 0; j-- {
			if am[i] == bm[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	for k := 0; k < head; k++ {
		ops = append(ops, diffOp{' ', a[k], k, k})
	}
	i, j := 0, 0
	for i < len(am) || j < len(bm) {
		switch {
		case i < len(am) && j < len(bm) && am[i] == bm[j]:
			ops = append(ops, diffOp{' ', am[i], head + i, head + j})
			i++
			j++
		case j < len(bm) && (i == len(am) || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, diffOp{'+', bm[j], head + i, head + j})
			j++
		default:
			ops = append(ops, diffOp{'-', am[i], head + i, head + j})
			i++
		}
	}
	for k := 0; k < tail; k++ {
		ops = append(ops, diffOp{' ', a[len(a)-tail+k], len(a) - tail + k, len(b) - tail + k})
	}
	return ops
}
