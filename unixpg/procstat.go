package unixpg

import (
	"bytes"
	"strconv"
)

// procStat holds the fields of a Linux /proc/PID/stat line that unixpg uses.
type procStat struct {
	// state is the one-letter state: R, S, D, Z (zombie), T, X (dead), …
	state byte
	// ppid is the parent's pid.
	ppid int
}

// parseProcStat parses a /proc/PID/stat line. The command name (field 2) is
// in parentheses and may itself contain spaces and parentheses, so parsing
// starts after the last ')'. ok is false for anything malformed.
func parseProcStat(b []byte) (st procStat, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return st, false
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return st, false
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	if err != nil || ppid < 0 {
		return st, false
	}
	return procStat{state: fields[0][0], ppid: ppid}, true
}
