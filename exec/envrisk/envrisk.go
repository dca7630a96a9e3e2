// Package envrisk names the environment variables that change what a
// program loads or runs: a dynamic loader preload, a shell's start-up file,
// a git configuration file, an interpreter's start-up options, a pager or
// an editor a tool starts, the directories programs are looked up in.
//
// It is the one list behind two checks (SPEC §10):
//
//   - the run environment: such a variable reaches a run only from the
//     person's login environment, never from whoever started the host
//     (exec's environment builder);
//   - the argument guard: `env NAME=value cmd` (and the like) with such a
//     NAME is a dangerous argument, so a rule never auto-allows it
//     (prefs).
//
// The package is a leaf: every room may import it.
package envrisk

import (
	"runtime"
	"strings"
)

// Names are the variables that steer what a program loads or runs,
// matched whole. Each group names the programs that read them.
var Names = []string{
	// Program lookup and the user's configuration directories (a changed
	// HOME or XDG_CONFIG_HOME makes git, npm, ssh… read another config).
	"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS",
	// Shells: start-up files, exported options, traced prompts, cd paths.
	"BASH_ENV", "ENV", "ZDOTDIR", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "CDPATH", "IFS", "SHELL",
	// Dynamic loader and C library.
	"GCONV_PATH", "GLIBC_TUNABLES", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "MALLOC_CHECK_",
	// git: configuration, programs it starts, where it looks.
	"GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER",
	"GIT_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_WORK_TREE",
	"GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_ALLOW_PROTOCOL", "GIT_PROTOCOL_FROM_USER",
	"SSH_ASKPASS", "SSH_ASKPASS_REQUIRE",
	// Programs tools start for the person.
	"EDITOR", "VISUAL", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "BROWSER", "TERMINFO", "TERMINFO_DIRS",
	// Interpreters' start-up code, options and module paths.
	"NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE",
	"PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT", "PYTHONBREAKPOINT", "PYTHONUSERBASE", "PYTHONEXECUTABLE",
	"PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "PERL_MB_OPT", "PERL_MM_OPT",
	"RUBYOPT", "RUBYLIB", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "JAVA_HOME",
	"PHPRC", "PHP_INI_SCAN_DIR", "LUA_INIT", "LUA_PATH", "LUA_CPATH", "TCLLIBPATH", "R_PROFILE_USER",
	// Option variables of the programs in the argument guard's catalog:
	// each can hold a dangerous option the command line does not show
	// (rg --pre, tar --to-command, zip -TT, rsync -e, man -P…).
	"RIPGREP_CONFIG_PATH", "CURL_HOME", "WGETRC", "TAR_OPTIONS", "ZIPOPT", "UNZIP", "UNZIPOPT", "RSYNC_RSH",
	"RSYNC_CONNECT_PROG", "CVS_RSH", "MANOPT", "AWKPATH", "AWKLIBPATH",
	// Build tools that run a configured program.
	"GOFLAGS", "GOENV", "GOTOOLCHAIN", "GOROOT", "CC", "CXX", "CPP", "LD", "AR", "CGO_CFLAGS", "CGO_LDFLAGS",
	"RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTDOCFLAGS", "RUSTFLAGS", "CARGO_HOME",
	"MAKEFLAGS", "MFLAGS", "MAKEFILES", "CMAKE_TOOLCHAIN_FILE",
	// Windows: how a command name becomes a program.
	"PATHEXT", "COMSPEC",
	// Configuration that names a program to run or a library to load:
	// OpenSSL engines, editors' start-up commands, version-control
	// transports, compiler drivers, JVM launchers' options,
	// .NET start-up hooks, cloud and cluster tools' credential programs.
	"OPENSSL_CONF", "OPENSSL_ENGINES", "VIMINIT", "EXINIT", "MYVIMRC", "HGRCPATH",
	"SVN_SSH", "GCC_EXEC_PREFIX", "COMPILER_PATH",
	"MAVEN_OPTS", "GRADLE_OPTS", "SBT_OPTS", "ANT_OPTS", "DOTNET_STARTUP_HOOKS", "ELECTRON_RUN_AS_NODE",
	"PSModulePath", "KUBECONFIG", "DOCKER_CONFIG", "AWS_CONFIG_FILE", "GNUPGHOME",
}

// Prefixes are name prefixes whose every variable steers a program:
// loader preloads and paths (LD_PRELOAD, LD_AUDIT, DYLD_INSERT_LIBRARIES…),
// git's environment configuration (GIT_CONFIG, GIT_CONFIG_GLOBAL,
// GIT_CONFIG_COUNT, GIT_CONFIG_KEY_0…), bash's exported functions
// (BASH_FUNC_name%%), npm's and yarn's configuration (npm_config_script_shell…),
// Cargo's (CARGO_BUILD_RUSTC_WRAPPER, CARGO_TARGET_…_RUNNER), pip's, the
// .NET profilers' (CORECLR_PROFILER_PATH, COR_PROFILER) and rustup's
// (RUSTUP_TOOLCHAIN picks the compiler that runs).
var Prefixes = []string{
	"LD_", "DYLD_", "GIT_CONFIG", "BASH_FUNC_", "NPM_CONFIG_", "YARN_", "CARGO_BUILD_", "CARGO_TARGET_",
	"PIP_", "UV_", "POETRY_", "CORECLR_", "COR_", "RUSTUP_",
}

// Steers reports whether a variable of this name changes what a program
// loads or runs: it is one of Names, or starts with one of Prefixes. On
// Windows, where variable names are case-insensitive, the comparison is
// too; elsewhere it is exact, except that npm's configuration variables
// are recognised in either case (npm reads npm_config_* and NPM_CONFIG_*).
func Steers(name string) bool {
	return steers(name, runtime.GOOS == "windows")
}

// steers is Steers for a given case rule (foldCase: Windows).
func steers(name string, foldCase bool) bool {
	if name == "" {
		return false
	}
	probe := name
	if foldCase || strings.HasPrefix(strings.ToUpper(name), "NPM_CONFIG_") {
		probe = strings.ToUpper(name)
	}
	for _, n := range Names {
		if probe == n || (foldCase && probe == strings.ToUpper(n)) {
			return true
		}
	}
	for _, p := range Prefixes {
		if strings.HasPrefix(probe, p) {
			return true
		}
	}
	return false
}

// Filter returns env (KEY=value entries) without the entries whose name
// Steers, in their order, and the names it removed. Entries without '='
// are dropped as malformed.
func Filter(env []string) (kept []string, removed []string) {
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if Steers(k) {
			removed = append(removed, k)
			continue
		}
		kept = append(kept, kv)
	}
	return kept, removed
}
