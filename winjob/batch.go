package winjob

import (
	"fmt"
	"strconv"
	"strings"
)

// batchMetachars are the characters CheckBatchArgs refuses in the arguments
// of a .bat or .cmd target, and why. Windows runs such a target as
// `cmd.exe /c "<command line>"`, and Go builds that command line with the
// quoting of ordinary programs (syscall.EscapeArg), which cmd.exe does not
// follow ("BatBadBut", CVE-2024-24576 and relatives):
//
//	"        Go escapes it as \", which cmd.exe does not understand: the quote
//	         toggles cmd's quoting and exposes the rest of the argument.
//	& | < >  command separators, pipes and redirections.
//	^        cmd's escape character.
//	%        variable expansion (%PATH%, %~dp0), performed even inside quotes.
//	!        delayed expansion (when enabled), also inside quotes.
//	( )      blocks: they end or open `if`/`for` bodies where the batch file
//	         expands the argument without quotes (%~1).
//	, ; =    batch parameter delimiters: cmd splits %1, %2 on them as on
//	         spaces, so the script would see other arguments than the
//	         person approved.
//
// Besides these, every ASCII control character but tab is refused (CR and
// LF end a command line, NUL truncates it, the others have no business in
// an approved argument). Space and tab are allowed: Go wraps such an
// argument in double quotes, and with '"' refused it cannot leave them; the
// script sees the argument with its quotes in %1 (and without in %~1).
const batchMetachars = "\"&|<>^%!(),;="

// BatchArgError is CheckBatchArgs's refusal: which argument, where, and
// which character.
type BatchArgError struct {
	// Path is the batch file that would have run.
	Path string
	// Index is the argument's index in argv (0 is argv[0]).
	Index int
	// Arg is the refused argument.
	Arg string
	// Char is the first refused character in Arg.
	Char rune
}

// Error names the argument by index, shows it with control characters
// escaped, names the character and says what to do.
func (e *BatchArgError) Error() string {
	return fmt.Sprintf("argument %d (%s) contains %s, which cmd.exe would interpret: %s is a batch file and "+
		"runs through cmd.exe, where such an argument could run other commands; pass the value another way "+
		"(e.g. in a file) or run a program that is not a .bat/.cmd file",
		e.Index, strconv.Quote(e.Arg), describeChar(e.Char), e.Path)
}

// describeChar shows c as 'c', or by code point when it is a control
// character.
func describeChar(c rune) string {
	if c < 0x20 || c == 0x7f {
		return fmt.Sprintf("the control character %U", c)
	}
	return strconv.QuoteRune(c)
}

// IsBatchFile reports whether Windows would run path through cmd.exe: its
// extension, after the trailing dots and spaces that Windows ignores in file
// names, is .bat or .cmd in any letter case. Both / and \ separate
// directories.
func IsBatchFile(path string) bool {
	name := path[strings.LastIndexAny(path, `/\`)+1:]
	name = strings.TrimRight(name, ". ")
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return false
	}
	ext := strings.ToLower(name[dot:])
	return ext == ".bat" || ext == ".cmd"
}

// CheckBatchArgs returns nil when path is not a batch file (see
// IsBatchFile), or when no element of args (argv, argv[0] included)
// contains a character of batchMetachars or an ASCII control character
// other than tab. Otherwise it returns a *BatchArgError for the first
// such argument.
func CheckBatchArgs(path string, args []string) error {
	if !IsBatchFile(path) {
		return nil
	}
	for i, arg := range args {
		for _, c := range arg {
			if strings.ContainsRune(batchMetachars, c) || (c < 0x20 && c != '\t') || c == 0x7f {
				return &BatchArgError{Path: path, Index: i, Arg: arg, Char: c}
			}
		}
	}
	return nil
}
