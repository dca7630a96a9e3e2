package wire

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/agentgate/agentgate/prefs"
)

// EnvSocket names the environment variable that overrides the socket path
// (for tests and for forwarding the bridge over SSH).
const EnvSocket = "AGENTGATE_SOCKET"

// darwinSunPathMax is the size of sun_path on macOS, including the NUL.
const darwinSunPathMax = 104

// Placement holds everything the socket path depends on, so that the choice
// is a pure function (Place) tested per OS. SocketPath fills it from the
// running process.
type Placement struct {
	// GOOS is the target OS ("linux", "darwin", "windows", other Unix).
	GOOS string
	// Override is $AGENTGATE_SOCKET ("" when unset).
	Override string
	// XDGRuntimeDir is $XDG_RUNTIME_DIR ("" when unset).
	XDGRuntimeDir string
	// UID is the user's numeric id (-1 on Windows).
	UID int
	// RunUserDirOK reports whether /run/user/<UID> exists, is a directory
	// owned by UID and is not accessible to group or others.
	RunUserDirOK bool
	// Home is the user's home directory (macOS).
	Home string
	// LocalAppData is %LOCALAPPDATA% (Windows), or "" when unset.
	LocalAppData string
	// UserProfile is %USERPROFILE% (Windows), used when LocalAppData is unset.
	UserProfile string
}

// Place returns the socket path for pl. The rules:
//   - Override, when set, wins on every OS.
//   - Linux and other Unix: $XDG_RUNTIME_DIR/agentgate/bridge.sock when
//     XDG_RUNTIME_DIR is set and is not /run/user/<uid>; otherwise the path
//     derived from the user's identity alone, so that a process started
//     with a minimal environment (MCP clients pass only HOME, LOGNAME, PATH,
//     SHELL, TERM, USER) finds the same socket as the app:
//     /run/user/<uid>/agentgate/bridge.sock when RunUserDirOK, else
//     /tmp/agentgate-<uid>/bridge.sock. /tmp rather than $TMPDIR because
//     TMPDIR, too, differs between environments.
//   - macOS: $HOME/Library/Caches/agentgate/b.sock when that is shorter
//     than sun_path's 104 bytes, else /tmp/agentgate-<uid>/b.sock.
//   - Windows: %LOCALAPPDATA%\agentgate\bridge.sock (falling back to
//     %USERPROFILE%\AppData\Local). The per-user profile directory's ACL
//     (the user, SYSTEM and Administrators) is what protects it; Windows
//     has no peer credentials for AF_UNIX.
//
// It returns an error only when no place can be derived (Windows without
// either variable, macOS without HOME is handled by the /tmp fallback).
func Place(pl Placement) (string, error) {
	if pl.Override != "" {
		return pl.Override, nil
	}
	uid := strconv.Itoa(pl.UID)
	switch pl.GOOS {
	case "windows":
		base := pl.LocalAppData
		if base == "" {
			if pl.UserProfile == "" {
				return "", errors.New("cannot place the agentgate socket: neither LOCALAPPDATA nor USERPROFILE is set; set AGENTGATE_SOCKET to a path in a directory only you can enter")
			}
			base = pl.UserProfile + `\AppData\Local`
		}
		return base + `\agentgate\bridge.sock`, nil
	case "darwin":
		if pl.Home != "" {
			p := filepath.Join(pl.Home, "Library", "Caches", "agentgate", "b.sock")
			if len(p) < darwinSunPathMax {
				return p, nil
			}
		}
		return filepath.Join("/tmp", "agentgate-"+uid, "b.sock"), nil
	default:
		runUser := filepath.Join("/run/user", uid)
		if pl.XDGRuntimeDir != "" && filepath.Clean(pl.XDGRuntimeDir) != runUser {
			return filepath.Join(pl.XDGRuntimeDir, "agentgate", "bridge.sock"), nil
		}
		if pl.RunUserDirOK {
			return filepath.Join(runUser, "agentgate", "bridge.sock"), nil
		}
		return filepath.Join("/tmp", "agentgate-"+uid, "bridge.sock"), nil
	}
}

// CurrentPlacement fills a Placement from the running process.
func CurrentPlacement() Placement {
	uid := os.Getuid()
	home, _ := os.UserHomeDir()
	pl := Placement{
		GOOS:          runtime.GOOS,
		Override:      os.Getenv(EnvSocket),
		XDGRuntimeDir: os.Getenv("XDG_RUNTIME_DIR"),
		UID:           uid,
		Home:          home,
		LocalAppData:  os.Getenv("LOCALAPPDATA"),
		UserProfile:   os.Getenv("USERPROFILE"),
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" {
		// Only a yes or no is wanted: a missing directory (no login
		// manager, as over SSH or in a container) gets no worded error,
		// and the hook, which places its socket on every tool call, skips
		// fmt's first use.
		runUser := filepath.Join("/run/user", strconv.Itoa(uid))
		if fi, err := os.Lstat(runUser); err == nil {
			pl.RunUserDirOK = checkPrivateInfo(runUser, fi) == nil
		}
	}
	return pl
}

// SocketPath returns the bridge socket path for the current user (see Place).
func SocketPath() (string, error) { return Place(CurrentPlacement()) }

// SocketPlace describes the socket at path ("" means SocketPath) as one of
// agentgate's own places, for prefs.CheckDirs: socketPlace for this
// process's placement and account; the zero OwnPlace, which CheckDirs
// skips, when path is "" and no socket can be placed.
func SocketPlace(path string) prefs.OwnPlace {
	pl := CurrentPlacement()
	if path == "" {
		var err error
		if path, err = Place(pl); err != nil {
			return prefs.OwnPlace{}
		}
	}
	return socketPlace(pl, prefs.AccountHome(), accountLocalAppData(), path)
}

// socketPlace describes the socket at path, placed from pl, as one of
// agentgate's own places: the variable that chose it — AGENTGATE_SOCKET
// when path is its value; XDG_RUNTIME_DIR (Linux and other Unix) when path
// lies in it; on macOS HOME when it is not accountHome; on Windows
// LOCALAPPDATA, or USERPROFILE when LOCALAPPDATA is unset — and whether it
// is the per-user default: the path Place gives with no override and no
// XDG_RUNTIME_DIR, from accountHome (the account database's home) or, on
// Windows, accountLocalAppData (the known folder; "" when unknown: then
// nothing is the default).
func socketPlace(pl Placement, accountHome, accountLocalAppData, path string) prefs.OwnPlace {
	def := pl
	def.Override, def.XDGRuntimeDir, def.Home = "", "", accountHome
	if pl.GOOS == "windows" {
		def.LocalAppData, def.UserProfile = accountLocalAppData, ""
	}
	place := prefs.OwnPlace{What: "bridge socket", Stake: "a program that answers in agentgate's place", Path: path}
	if defPath, err := Place(def); err == nil && defPath == path && (pl.GOOS != "windows" || def.LocalAppData != "") {
		place.Default = true
	}
	switch {
	case pl.Override != "":
		if pl.Override == path {
			place.Variable = EnvSocket
		}
	case pl.GOOS == "windows":
		if pl.LocalAppData != "" && pl.LocalAppData+`\agentgate\bridge.sock` == path {
			place.Variable = "LOCALAPPDATA"
		} else if pl.LocalAppData == "" && pl.UserProfile+`\AppData\Local\agentgate\bridge.sock` == path {
			place.Variable = "USERPROFILE"
		}
	case pl.GOOS == "darwin":
		if pl.Home != "" && pl.Home != accountHome && filepath.Join(pl.Home, "Library", "Caches", "agentgate", "b.sock") == path {
			place.Variable = "HOME"
		}
	case pl.XDGRuntimeDir != "" && filepath.Join(pl.XDGRuntimeDir, "agentgate", "bridge.sock") == path:
		place.Variable = "XDG_RUNTIME_DIR"
	}
	return place
}

// ResolveDirs is how every agentgate process finds its own places: the
// configuration and state directories (prefs.DefaultPaths) and the bridge
// socket (SocketPath), refused by prefs.CheckDirs when one lies inside one
// of projects (the project roots and working directories the process
// serves) or inside a place the commands agentgate lets run may write.
// The paths are returned with the error too, for messages.
func ResolveDirs(projects ...string) (prefs.Paths, string, error) {
	paths := prefs.DefaultPaths()
	socket, err := SocketPath()
	if err != nil {
		return paths, "", err
	}
	return paths, socket, prefs.CheckDirs(paths, SocketPlace(socket), projects...)
}

// PrepareSocketDir creates the socket's directory if it is missing (mode
// 0700, parents 0700 too) and checks that it is private: on Unix a real
// directory (not a symlink) owned by the current user with no group or
// other permission bits. A directory failing the check is refused, never
// repaired: someone else may have made it. On Windows it only creates the
// directory (the profile directory's ACL protects it).
func PrepareSocketDir(socketPath string) error {
	dir := filepath.Dir(socketPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the socket directory %s: %w", dir, err)
	}
	return CheckPrivateDir(dir)
}

// errNotPrivate marks a directory that fails CheckPrivateDir.
var errNotPrivate = errors.New("directory is not private")

// IsNotPrivate reports whether err says a directory is not private.
func IsNotPrivate(err error) bool { return errors.Is(err, errNotPrivate) }
