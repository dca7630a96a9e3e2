package winjob

import (
	"fmt"
	"strconv"
	"strings"
)

// batchMetachars are the characters CheckBatchArgs refuses in the arguments
// of a .bat or .cmd target, and why. Windows runs such a target as
// `cmd.exe /c "<command line>"`, and cmd.exe parses that command line with
// rules of its own that Go's quoting of ordinary programs
// (syscall.EscapeArg) does not follow ("BatBadBut", CVE-2024-24576 and
// relatives):
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

// batchPathMetachars are the characters CheckBatchArgs refuses in the path
// of a .bat or .cmd target. The path goes first on cmd.exe's command line,
// always in double quotes (see BatchCommandLine), where cmd.exe takes every
// character literally but these: '%' and '!' expand variables even inside
// quotes, and '"' would end the quotes (Windows forbids it in file names
// anyway). So a batch file under C:\Program Files (x86) runs, and one
// under a directory named %PATH% is refused.
const batchPathMetachars = "\"%!"

// BatchArgError is CheckBatchArgs's refusal: which argument, where, and
// which character.
type BatchArgError struct {
	// Path is the batch file that would have run.
	Path string
	// Index is the argument's index in argv, 1 or more; 0 means the batch
	// file's path itself (Arg is then Path).
	Index int
	// Arg is the refused argument (or the path, for Index 0).
	Arg string
	// Char is the first refused character in Arg.
	Char rune
}

// Error names the argument by index (or the path), shows it with control
// characters escaped, names the character and says what to do.
func (e *BatchArgError) Error() string {
	if e.Index == 0 {
		return fmt.Sprintf("the batch file's path %s contains %s, which cmd.exe would interpret even inside quotes: "+
			"it runs a batch file through cmd.exe, where such a path could run something else; "+
			"move or rename the file, or run a program that is not a .bat/.cmd file",
			strconv.Quote(e.Path), describeChar(e.Char))
	}
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
// IsBatchFile), or when path contains no character of batchPathMetachars
// and no element of args[1:] contains a character of batchMetachars, and
// neither contains an ASCII control character other than tab. Otherwise it
// returns a *BatchArgError for the path (Index 0) or the first such
// argument. args[0] is not checked: for a batch file it never reaches
// cmd.exe, whose command line starts with path instead (BatchCommandLine),
// so that cmd.exe runs the approved file and not another one of the same
// name that it would find first (in the current directory).
func CheckBatchArgs(path string, args []string) error {
	if !IsBatchFile(path) {
		return nil
	}
	if c, bad := firstRefused(path, batchPathMetachars); bad {
		return &BatchArgError{Path: path, Index: 0, Arg: path, Char: c}
	}
	for i := 1; i < len(args); i++ {
		if c, bad := firstRefused(args[i], batchMetachars); bad {
			return &BatchArgError{Path: path, Index: i, Arg: args[i], Char: c}
		}
	}
	return nil
}

// firstRefused returns the first rune of s that is in refused or is an
// ASCII control character other than tab.
func firstRefused(s, refused string) (rune, bool) {
	for _, c := range s {
		if strings.ContainsRune(refused, c) || (c < 0x20 && c != '\t') || c == 0x7f {
			return c, true
		}
	}
	return 0, false
}

// BatchCommandLine returns the command line that runs the batch file at
// path with the arguments args[1:]: path in double quotes, then each
// argument quoted by quoteArg (syscall.EscapeArg on Windows), separated by
// spaces. Windows hands it to `cmd.exe /c`, which runs exactly path (an
// absolute path is not looked up) instead of looking args[0] up again,
// current directory first, where a project could hold its own build.bat.
// The arguments must have passed CheckBatchArgs.
func BatchCommandLine(path string, args []string, quoteArg func(string) string) string {
	var b strings.Builder
	b.WriteString(`"` + path + `"`)
	for _, a := range args[min(1, len(args)):] {
		b.WriteByte(' ')
		b.WriteString(quoteArg(a))
	}
	return b.String()
}
