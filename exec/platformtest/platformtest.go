// Package platformtest lets tests say what of the platform they need, so
// that a test skips, with the reason, where the platform cannot host it,
// instead of failing for a reason that is not the code's.
//
// Today that concerns Wine: `make test` runs the Windows tests under Debian
// 12's Wine 8 (scripts/wine-go-test.sh), which lacks AF_UNIX sockets,
// symbolic links, POSIX rename semantics and atomic appends. Under Wine the
// tests needing them skip, saying so; on real Windows (and on Unix) they
// run, and there a missing feature is a real failure. See docs/lifetime.md
// for what runs where.
package platformtest

import (
	"debug/buildinfo"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// isWindows is true when the tests run on Windows (or under Wine).
const isWindows = runtime.GOOS == "windows"

// UnderWine reports whether this process runs under Wine rather than on
// Windows itself: Wine's ntdll.dll exports wine_get_version, Windows' does
// not. It is false on every other platform.
func UnderWine() bool { return underWine }

// RequireUnixSockets skips t under Wine, whose Winsock refuses AF_UNIX
// sockets (WSAEAFNOSUPPORT, error 10047); Windows has them since 10 1803.
func RequireUnixSockets(t testing.TB) {
	t.Helper()
	skipUnderWine(t, "AF_UNIX sockets (Wine 8: WSAEAFNOSUPPORT)")
}

// RequireSymlinks skips t under Wine, where os.Symlink reports success but
// creates nothing.
func RequireSymlinks(t testing.TB) {
	t.Helper()
	skipUnderWine(t, "symbolic links (Wine 8's os.Symlink succeeds and creates nothing)")
}

// RequireAtomicAppends skips t under Wine, whose append-only file handles
// race for the end of the file: writes through separate handles (separate
// processes appending to one log) overwrite each other. On Windows, NTFS
// appends each write atomically, and on Unix O_APPEND does.
func RequireAtomicAppends(t testing.TB) {
	t.Helper()
	skipUnderWine(t, "atomic appends through separate handles (Wine 8's appends race for the end of the file)")
}

// RequirePOSIXRename skips t under Wine, which lacks POSIX rename semantics
// (FILE_RENAME_POSIX_SEMANTICS): there a file cannot be replaced while
// another handle holds it open, even one that shares delete access, so a
// test whose readers hold the file nearly all the time cannot replace it.
// Windows 10 1709 and later have them on NTFS; Unix always.
func RequirePOSIXRename(t testing.TB) {
	t.Helper()
	skipUnderWine(t, "POSIX rename semantics, replacing a file that readers hold open (Wine 8 refuses: access denied)")
}

// skipUnderWine skips t under Wine, saying what the test needs that Wine
// lacks.
func skipUnderWine(t testing.TB, needs string) {
	t.Helper()
	if underWine {
		t.Skip("needs " + needs + "; runs on real Windows and on Unix")
	}
}

// NativePath returns the slash-separated path p in this platform's form, so
// that a test writes its paths once, Unix-style: on Windows a rooted p
// ("/home/sam") gets the drive C: and every p gets backslashes; elsewhere p
// is returned unchanged.
func NativePath(p string) string {
	if !isWindows {
		return p
	}
	if strings.HasPrefix(p, "/") {
		p = "C:" + p
	}
	return strings.ReplaceAll(p, "/", `\`)
}

// SettleExecutable rewrites the executable at path with plain writes (to a
// temporary file beside it, renamed over it), as installing it would, and
// fails tb if it cannot. The Go linker writes its output through a memory
// mapping, which leaves the file in the page cache as 4 KiB pages; on Linux
// with ext4 (6.x kernels) a file written with write(2) is cached in large
// folios instead, and executing it takes fewer page faults: the 6 MB
// agentgate-hook used a fifth less CPU per run (BENCHMARKS.md, which also
// gives the figures for executables faulted in from disk after the cache
// is dropped). A benchmark that runs an executable it just built settles
// it first, so that it measures what `make build` and an install leave;
// `make build` settles what it builds the same way.
func SettleExecutable(tb testing.TB, path string) {
	tb.Helper()
	if err := settle(path); err != nil {
		tb.Fatalf("settling the executable %s: %v", path, err)
	}
}

// settle is SettleExecutable's work; it leaves no temporary file behind.
func settle(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	tmp := path + ".settle"
	if err := os.WriteFile(tmp, data, info.Mode().Perm()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// RequirePatchedModule checks the executable bin as `make build` builds it,
// in the workspace scripts/fyne-work.sh makes: it must link module from a
// patched copy, one whose file (slash-separated, relative to the module)
// holds marker, the mark of scripts/patch. It skips tb when bin cannot be
// read (no built executable: a plain `go test`), and fails it when bin links
// module as it is, links a copy without marker, or does not link module.
func RequirePatchedModule(tb testing.TB, bin, module, file, marker, patch string) {
	tb.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		tb.Skipf("no built %s to look at (%v); make build builds it", filepath.Base(bin), err)
	}
	for _, m := range info.Deps {
		if m.Path != module {
			continue
		}
		if m.Replace == nil {
			tb.Fatalf("%s links %s %s as it is, without scripts/%s (build it with make)", bin, module, m.Version, patch)
		}
		src, err := os.ReadFile(filepath.Join(m.Replace.Path, filepath.FromSlash(file)))
		if err != nil {
			tb.Fatal(err)
		}
		if !strings.Contains(string(src), marker) {
			tb.Fatalf("%s links %s, whose %s lacks scripts/%s", bin, m.Replace.Path, file, patch)
		}
		return
	}
	tb.Fatalf("%s does not link %s", bin, module)
}
