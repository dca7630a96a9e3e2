package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Refusal codes: stable strings that agents and adapters may branch on.
// They are listed in docs/executor.md.
const (
	// CodeEmptyArgv: the proposal's argv has no elements.
	CodeEmptyArgv = "empty_argv"
	// CodeEmptyProgram: argv[0] is the empty string.
	CodeEmptyProgram = "empty_program"
	// CodeNulByte: an argv token, the cwd or the project root holds a NUL byte.
	CodeNulByte = "nul_byte"
	// CodeRedirectionToken: a token is a shell redirection, pipe or
	// job-control operator (see IsShellOperatorToken).
	CodeRedirectionToken = "redirection_token"
	// CodeCwdNotFound: the working directory does not exist or is not a
	// directory.
	CodeCwdNotFound = "cwd_not_found"
	// CodeCwdOutsideProject: the working directory resolves outside the
	// project root.
	CodeCwdOutsideProject = "cwd_outside_project"
	// CodeProjectRootInvalid: the project root is empty, relative, missing or
	// not a directory.
	CodeProjectRootInvalid = "project_root_invalid"
	// CodeTimeoutOutOfRange: the timeout is negative, below 1 ms or above
	// MaxTimeout.
	CodeTimeoutOutOfRange = "timeout_out_of_range"
	// CodeStdinTooLarge: stdin holds more than MaxStdin bytes.
	CodeStdinTooLarge = "stdin_too_large"
	// CodeExecutableNotFound: argv[0] names no executable file on the host's
	// PATH (or, for a path, at that path).
	CodeExecutableNotFound = "executable_not_found"
	// CodeBatchArgumentUnsafe: Windows only; a .bat/.cmd target was given an
	// argument carrying cmd.exe metacharacters.
	CodeBatchArgumentUnsafe = "batch_argument_unsafe"
	// CodeCwdChanged: the working directory (or the project root) is no
	// longer the one that was checked: replaced, removed, or reached
	// through a symlink now. Refused at validation when it changes while
	// being checked, and by Executor.Start, even after approval.
	CodeCwdChanged = "cwd_changed"
	// CodeProgramChanged: the executable is no longer the file that was
	// checked (device, inode, size, times; content for a program inside the
	// project). Refused by Executor.Start, even after approval.
	CodeProgramChanged = "program_changed"
	// CodeConfinementUnavailable: require_confinement is set and the run's
	// writes could not be confined (no Landlock, no shim, not Linux).
	// Refused by Executor.Start; nothing ran.
	CodeConfinementUnavailable = "confinement_unavailable"
	// CodeFailedToStart: Executor.Start could not launch the process.
	CodeFailedToStart = "failed_to_start"
	// CodeContainmentFailed: Executor.Start could not set up the platform's
	// containment (process group supervisor, Job Object); nothing ran.
	CodeContainmentFailed = "containment_failed"
)

// minTimeout is the smallest timeout a proposal may ask for.
const minTimeout = time.Millisecond

// shellOperators is the one table of tokens a shell would treat as
// redirection, pipe, list or job control. A token equal to one of them is
// refused. Redirection operators (Redirect true) are also refused when a
// file-descriptor prefix comes before them or a target is glued after them
// (see IsShellOperatorToken).
var shellOperators = []struct {
	// Op is the operator as a shell spells it.
	Op string
	// Redirect marks operators that redirect a file descriptor and so may
	// carry an fd prefix (`2>`) and a glued target (`>file`, `2>&1`).
	Redirect bool
}{
	{"<", true}, {">", true}, {">>", true}, {"<<", true}, {"<<-", true}, {"<<<", true},
	{"<>", true}, {">|", true}, {">&", true}, {"<&", true}, {"&>", true}, {"&>>", true},
	{"|", false}, {"|&", false}, {"||", false}, {"&", false}, {"&&", false},
	{";", false}, {";;", false}, {";&", false}, {";;&", false},
}

// IsShellOperatorToken reports whether a single argv token is one a shell
// would treat as redirection, pipe, list or job control, which Validate
// refuses. No shell ever runs a Command, so such a token can only mean the
// agent expected one; refusing it makes that mistake visible instead of
// passing a literal ">" to a program.
//
// The rule, for a whole token t:
//   - t equals an operator of the table: < > >> << <<- <<< <> >| >& <& &> &>>
//     | |& || & && ; ;; ;& ;;& ;
//   - or t is a redirection with a file-descriptor prefix and/or a glued
//     target: an optional prefix (decimal digits, or a bash `{name}`), then a
//     redirection operator starting with `<` or `>` or `&>`, then anything:
//     `2>`, `2>&1`, `1>file`, `>file`, `>>log`, `<input`, `<&3`, `&>out`,
//     `&>>out`, `{fd}>x`, and also `<(cmd)` and `>(cmd)` (process
//     substitution). Every token whose first byte is `<` or `>` is refused.
//
// Operators inside or at the end of a token are accepted: `a>b`, `x|y`,
// `--match=a<b`, `foo&bar`, `5&` and `a;b` are ordinary arguments (regular
// expressions, HTML, URLs, comparisons) and a shell would not split them
// either way once quoted. As a consequence of the table, `find … -exec cmd {}
// ;` is refused (use `+` instead of `;`), and so is an `expr 1 ">" 2`.
func IsShellOperatorToken(t string) bool {
	for _, op := range shellOperators {
		if t == op.Op {
			return true
		}
	}
	rest := trimFDPrefix(t)
	if rest == "" {
		return false
	}
	return rest[0] == '<' || rest[0] == '>' || strings.HasPrefix(rest, "&>")
}

// trimFDPrefix removes a leading file-descriptor prefix of a redirection
// (decimal digits, or a bash `{name}` variable) and returns the rest; a token
// without such a prefix is returned unchanged.
func trimFDPrefix(t string) string {
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 {
		return t[i:]
	}
	if strings.HasPrefix(t, "{") {
		end := strings.IndexByte(t, '}')
		if end > 1 && isShellName(t[1:end]) {
			return t[end+1:]
		}
	}
	return t
}

// isShellName reports whether s is a shell variable name: a letter or
// underscore, then letters, digits or underscores.
func isShellName(s string) bool {
	for i, c := range s {
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// Validate checks a proposal and turns it into the Command that will run and
// be shown, or refuses it with a *Refusal. Nothing is started and nobody is
// asked before it returns. pathEnv is the PATH value of the host's
// environment (see HostEnv); the agent supplies no environment.
//
// Checks, in this order, the first failure being returned:
//   - argv non-empty (empty_argv), argv[0] non-empty (empty_program), no NUL
//     byte in any token, the cwd or the project root (nul_byte, naming the
//     token and its index);
//   - no token is a shell operator as IsShellOperatorToken defines it
//     (redirection_token, naming the token and its index);
//   - stdin at most MaxStdin bytes (stdin_too_large);
//   - timeout: 0 means DefaultTimeout; otherwise between 1 ms and MaxTimeout
//     (timeout_out_of_range, stating the range);
//   - ProjectRoot absolute and an existing directory (project_root_invalid);
//     it is resolved with filepath.EvalSymlinks;
//   - Cwd: empty means the root; a relative cwd is taken below the resolved
//     root, an absolute one as is; the path is resolved with
//     filepath.EvalSymlinks, which applies `..` after symlinks (physically,
//     like `cd -P`), must be an existing directory (cwd_not_found) and must be
//     the root or below it (cwd_outside_project, showing the resolved path).
//     A symlink inside the project that points outside is therefore refused;
//   - argv[0]: a name without a path separator is looked up in pathEnv,
//     skipping empty and relative PATH entries (so "." in PATH never makes a
//     project file runnable by bare name); a name with a separator is taken
//     relative to the resolved cwd. It must be an executable regular file
//     (executable_not_found). Command.Executable is the absolute path found,
//     symlinks not resolved (what the person recognises);
//   - Windows only: for a .bat or .cmd target, no argument may carry cmd.exe
//     metacharacters (batch_argument_unsafe);
//   - the directory is bound by identity: the root is opened and, beneath
//     it, the resolved directory, without following any symlink (Linux:
//     openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS; elsewhere one component
//     at a time with O_NOFOLLOW); Command.RootID and DirID record device
//     and inode. A component that turns into a symlink or vanishes during
//     the check is refused (cwd_changed);
//   - the program is bound by identity: the executable, symlinks resolved
//     (Command.ExecutableResolved), is opened; Command.ProgramID records
//     device, inode, size, modification and change time, and, for a file
//     inside the project of at most 64 MiB, ProgramSHA256 its content.
//
// Executor.Start checks both bindings again and refuses (cwd_changed,
// program_changed) when either changed, even after approval; the run then
// starts in the very directory it opened (see procspec.Spec.DirFD).
func Validate(p Proposal, pathEnv string) (Command, error) {
	if len(p.Argv) == 0 {
		return Command{}, refusef(CodeEmptyArgv, "the command is empty: argv needs at least the program name; send the program and its arguments as a list")
	}
	if p.Argv[0] == "" {
		return Command{}, refusef(CodeEmptyProgram, "argv[0] is empty: the first token must name the program to run")
	}
	for i, tok := range p.Argv {
		if strings.IndexByte(tok, 0) >= 0 {
			return Command{}, refusef(CodeNulByte, "argv[%d] %s contains a NUL byte, which no program can receive; remove it", i, strconv.Quote(tok))
		}
	}
	if strings.IndexByte(p.Cwd, 0) >= 0 {
		return Command{}, refusef(CodeNulByte, "cwd %s contains a NUL byte; send a plain directory path", strconv.Quote(p.Cwd))
	}
	if strings.IndexByte(p.ProjectRoot, 0) >= 0 {
		return Command{}, refusef(CodeNulByte, "project root %s contains a NUL byte; send a plain directory path", strconv.Quote(p.ProjectRoot))
	}
	for i, tok := range p.Argv {
		if IsShellOperatorToken(tok) {
			return Command{}, refusef(CodeRedirectionToken,
				"argv[%d] %s is shell redirection, pipe or job-control syntax, but no shell runs this command: run one program per proposal and read its output from the result instead of redirecting it",
				i, strconv.Quote(tok))
		}
	}
	if len(p.Stdin) > MaxStdin {
		return Command{}, refusef(CodeStdinTooLarge, "stdin is %d bytes, more than the limit of %d bytes (512 KiB); pass large input as a file inside the project instead", len(p.Stdin), MaxStdin)
	}
	timeout := p.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < minTimeout || timeout > MaxTimeout {
		return Command{}, refusef(CodeTimeoutOutOfRange, "timeout %v is out of range: it must be between 1 ms and %v (%d ms); omit it for the default of %v. There is no unlimited timeout",
			p.Timeout, MaxTimeout, MaxTimeout.Milliseconds(), DefaultTimeout)
	}
	root, err := resolveProjectRoot(p.ProjectRoot)
	if err != nil {
		return Command{}, err
	}
	dir, rel, err := resolveCwd(root, p.Cwd)
	if err != nil {
		return Command{}, err
	}
	exe, err := lookExecutable(p.Argv[0], dir, pathEnv)
	if err != nil {
		return Command{}, err
	}
	dirIDs, err := bindDir(root, rel)
	if err != nil {
		return Command{}, err
	}
	prog, err := bindProgram(exe, root)
	if err != nil {
		return Command{}, err
	}
	if err := checkPlatformArgs(exe, p.Argv); err != nil {
		return Command{}, refusef(CodeBatchArgumentUnsafe, "%v", err)
	}
	sum := sha256.Sum256(p.Stdin)
	return Command{
		Argv:               append([]string(nil), p.Argv...),
		Executable:         exe,
		Dir:                dir,
		DirRel:             rel,
		ProjectRoot:        root,
		RootID:             dirIDs.rootID,
		DirID:              dirIDs.dirID,
		ExecutableResolved: prog.resolved,
		ProgramID:          prog.id,
		ProgramSHA256:      prog.sha256,
		Stdin:              append([]byte(nil), p.Stdin...),
		StdinSHA256:        hex.EncodeToString(sum[:]),
		Timeout:            timeout,
	}, nil
}

// refusef builds a *Refusal with a formatted message.
func refusef(code, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Message: fmt.Sprintf(format, args...)}
}

// resolveProjectRoot checks that root is an absolute existing directory and
// returns it with symlinks resolved.
func resolveProjectRoot(root string) (string, error) {
	if root == "" || !filepath.IsAbs(root) {
		return "", refusef(CodeProjectRootInvalid, "project root %s is not an absolute path; the session must declare the project's absolute directory", strconv.Quote(root))
	}
	resolved, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", refusef(CodeProjectRootInvalid, "project root %s cannot be resolved (%v); declare an existing directory", strconv.Quote(root), err)
	}
	if fi, err := os.Stat(resolved); err != nil || !fi.IsDir() {
		return "", refusef(CodeProjectRootInvalid, "project root %s (resolved to %s) is not a directory; declare an existing directory", strconv.Quote(root), strconv.Quote(resolved))
	}
	return resolved, nil
}

// resolveCwd resolves cwd against the resolved project root and returns the
// absolute resolved directory and its path relative to root. An empty cwd is
// the root itself, returned as is: resolveProjectRoot has just resolved it
// and checked it is a directory, and resolving it again would only repeat
// the same system calls.
func resolveCwd(root, cwd string) (dir, rel string, err error) {
	if cwd == "" {
		return root, ".", nil
	}
	candidate := root
	switch {
	case filepath.IsAbs(cwd):
		candidate = cwd
	default:
		// Not filepath.Join: Join cleans `link/..` lexically, while the
		// directory the process really gets is the physical one.
		candidate = root + string(filepath.Separator) + cwd
	}
	resolved, err := filepath.EvalSymlinks(candidate)
	if err != nil {
		return "", "", refusef(CodeCwdNotFound, "cwd %s (%s) does not exist or cannot be resolved: %v; use a directory inside the project %s", strconv.Quote(cwd), candidate, err, root)
	}
	rel, ok := within(root, resolved)
	if !ok {
		return "", "", refusef(CodeCwdOutsideProject, "cwd %s resolves to %s, which is outside the project %s; commands may only run in the project or below it", strconv.Quote(cwd), resolved, root)
	}
	if fi, err := os.Stat(resolved); err != nil || !fi.IsDir() {
		return "", "", refusef(CodeCwdNotFound, "cwd %s resolves to %s, which is not a directory; use a directory inside the project", strconv.Quote(cwd), resolved)
	}
	return resolved, rel, nil
}

// within reports whether path is root or below it, both absolute and clean,
// and returns path relative to root ("." for root itself).
func within(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || filepath.IsAbs(rel) {
		return "", false
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// lookExecutable resolves argv0 to the absolute path of an executable file:
// by PATH lookup in pathEnv when it has no separator, else relative to dir.
func lookExecutable(argv0, dir, pathEnv string) (string, error) {
	if strings.ContainsAny(argv0, pathSeparators) {
		p := argv0
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if found, ok := executableAt(filepath.Clean(p)); ok {
			return found, nil
		}
		return "", refusef(CodeExecutableNotFound, "program %s: %s is not an executable file; check the path (relative paths start at the cwd %s)", strconv.Quote(argv0), p, dir)
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if found, ok := executableAt(filepath.Join(d, argv0)); ok {
			return found, nil
		}
	}
	return "", refusef(CodeExecutableNotFound, "program %s was not found on the host's PATH (%s); install it, give its absolute path, or ask the person to fix the PATH of agentgate's login environment", strconv.Quote(argv0), pathEnv)
}
