package wire

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestPlace(t *testing.T) {
	longHome := "/Users/" + strings.Repeat("h", 90)
	tests := []struct {
		name string
		pl   Placement
		want string
		err  bool
	}{
		{"override wins", Placement{GOOS: "linux", Override: "/x/s.sock", XDGRuntimeDir: "/run/user/1000", UID: 1000}, "/x/s.sock", false},
		{"linux normal session", Placement{GOOS: "linux", XDGRuntimeDir: "/run/user/1000", UID: 1000, RunUserDirOK: true}, "/run/user/1000/agentgate/bridge.sock", false},
		{"linux minimal env agrees", Placement{GOOS: "linux", UID: 1000, RunUserDirOK: true}, "/run/user/1000/agentgate/bridge.sock", false},
		{"linux trailing slash", Placement{GOOS: "linux", XDGRuntimeDir: "/run/user/1000/", UID: 1000, RunUserDirOK: true}, "/run/user/1000/agentgate/bridge.sock", false},
		{"linux custom runtime dir", Placement{GOOS: "linux", XDGRuntimeDir: "/custom/rt", UID: 1000, RunUserDirOK: true}, "/custom/rt/agentgate/bridge.sock", false},
		{"linux no run/user", Placement{GOOS: "linux", UID: 1000}, "/tmp/agentgate-1000/bridge.sock", false},
		{"linux run/user var but dir unusable", Placement{GOOS: "linux", XDGRuntimeDir: "/run/user/0", UID: 0}, "/tmp/agentgate-0/bridge.sock", false},
		{"freebsd like linux", Placement{GOOS: "freebsd", UID: 1001}, "/tmp/agentgate-1001/bridge.sock", false},
		{"darwin cache dir", Placement{GOOS: "darwin", Home: "/Users/ann", UID: 501}, "/Users/ann/Library/Caches/agentgate/b.sock", false},
		{"darwin long home", Placement{GOOS: "darwin", Home: longHome, UID: 501}, "/tmp/agentgate-501/b.sock", false},
		{"darwin no home", Placement{GOOS: "darwin", UID: 501}, "/tmp/agentgate-501/b.sock", false},
		{"windows", Placement{GOOS: "windows", LocalAppData: `C:\Users\ann\AppData\Local`, UID: -1}, `C:\Users\ann\AppData\Local\agentgate\bridge.sock`, false},
		{"windows profile fallback", Placement{GOOS: "windows", UserProfile: `C:\Users\ann`, UID: -1}, `C:\Users\ann\AppData\Local\agentgate\bridge.sock`, false},
		{"windows nothing", Placement{GOOS: "windows", UID: -1}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && tc.pl.GOOS != "windows" {
				t.Skip("Unix paths use filepath.Join")
			}
			got, err := Place(tc.pl)
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("Place = %q, %v; want %q (error %v)", got, err, tc.want, tc.err)
			}
			if tc.pl.GOOS == "darwin" && len(got) >= darwinSunPathMax {
				t.Fatalf("darwin path of %d bytes exceeds sun_path", len(got))
			}
		})
	}
}

func TestPrepareSocketDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	base := t.TempDir()
	sock := filepath.Join(base, "a", "b", "bridge.sock")
	if err := PrepareSocketDir(sock); err != nil {
		t.Fatalf("PrepareSocketDir: %v", err)
	}
	fi, err := os.Stat(filepath.Dir(sock))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode = %v, %v; want 0700", fi.Mode(), err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := PrepareSocketDir(filepath.Join(open, "s.sock")); !IsNotPrivate(err) {
		t.Fatalf("0755 dir: err = %v, want not private", err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(filepath.Dir(sock), link); err != nil {
		t.Fatal(err)
	}
	if err := PrepareSocketDir(filepath.Join(link, "s.sock")); !IsNotPrivate(err) {
		t.Fatalf("symlink dir: err = %v, want not private", err)
	}
	if os.Getuid() == 0 {
		other := filepath.Join(base, "other")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := PrepareSocketDir(filepath.Join(other, "s.sock")); !IsNotPrivate(err) || !strings.Contains(err.Error(), "65534") {
			t.Fatalf("foreign dir: err = %v, want not private naming uid 65534", err)
		}
	}
}

func TestSocketPlace(t *testing.T) {
	const home, lad = "/home/ann", `C:\Users\ann\AppData\Local`
	tests := []struct {
		name         string
		pl           Placement
		localAppData string // the account's known folder
		path         string
		variable     string
		isDefault    bool
	}{
		{"linux default", Placement{GOOS: "linux", UID: 1000, RunUserDirOK: true}, "", "/run/user/1000/agentgate/bridge.sock", "", true},
		{"linux session runtime dir is the default", Placement{GOOS: "linux", XDGRuntimeDir: "/run/user/1000", UID: 1000, RunUserDirOK: true}, "", "/run/user/1000/agentgate/bridge.sock", "XDG_RUNTIME_DIR", true},
		{"linux /tmp fallback is the default", Placement{GOOS: "linux", UID: 1000}, "", "/tmp/agentgate-1000/bridge.sock", "", true},
		{"linux runtime dir chosen", Placement{GOOS: "linux", XDGRuntimeDir: "/src/repo/rt", UID: 1000, RunUserDirOK: true}, "", "/src/repo/rt/agentgate/bridge.sock", "XDG_RUNTIME_DIR", false},
		{"override", Placement{GOOS: "linux", Override: "/src/repo/s.sock", UID: 1000}, "", "/src/repo/s.sock", EnvSocket, false},
		{"override naming the default", Placement{GOOS: "linux", Override: "/run/user/1000/agentgate/bridge.sock", UID: 1000, RunUserDirOK: true}, "", "/run/user/1000/agentgate/bridge.sock", EnvSocket, true},
		{"a path no variable chose", Placement{GOOS: "linux", UID: 1000}, "", "/given/by/a/test.sock", "", false},
		{"darwin default", Placement{GOOS: "darwin", Home: home, UID: 501}, "", home + "/Library/Caches/agentgate/b.sock", "", true},
		{"darwin HOME chosen", Placement{GOOS: "darwin", Home: "/src/repo", UID: 501}, "", "/src/repo/Library/Caches/agentgate/b.sock", "HOME", false},
		{"windows default", Placement{GOOS: "windows", LocalAppData: lad, UID: -1}, lad, lad + `\agentgate\bridge.sock`, "LOCALAPPDATA", true},
		{"windows LOCALAPPDATA chosen", Placement{GOOS: "windows", LocalAppData: `C:\src\repo`, UID: -1}, lad, `C:\src\repo\agentgate\bridge.sock`, "LOCALAPPDATA", false},
		{"windows USERPROFILE chosen", Placement{GOOS: "windows", UserProfile: `C:\src\repo`, UID: -1}, lad, `C:\src\repo\AppData\Local\agentgate\bridge.sock`, "USERPROFILE", false},
		{"windows known folder unknown", Placement{GOOS: "windows", LocalAppData: lad, UID: -1}, "", lad + `\agentgate\bridge.sock`, "LOCALAPPDATA", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && tc.pl.GOOS != "windows" {
				t.Skip("Unix paths use filepath.Join")
			}
			got := socketPlace(tc.pl, home, tc.localAppData, tc.path)
			if got.Path != tc.path || got.Variable != tc.variable || got.Default != tc.isDefault {
				t.Fatalf("socketPlace = %+v; want variable %q, default %v", got, tc.variable, tc.isDefault)
			}
		})
	}
}
