package procspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFileIDDescribe(t *testing.T) {
	base := FileID{Dev: 1, Ino: 2, Size: 3, MtimeNS: 4, CtimeNS: 5}
	cases := []struct {
		found FileID
		want  string
	}{
		{base, ""},
		{FileID{Dev: 1, Ino: 9, Size: 3, MtimeNS: 4, CtimeNS: 5}, "a different file"},
		{FileID{Dev: 7, Ino: 2, Size: 3, MtimeNS: 4, CtimeNS: 5}, "a different file"},
		{FileID{Dev: 1, Ino: 2, Size: 8, MtimeNS: 4, CtimeNS: 5}, "size changed (3 → 8 bytes)"},
		{FileID{Dev: 1, Ino: 2, Size: 3, MtimeNS: 6, CtimeNS: 5}, "modification time"},
		{FileID{Dev: 1, Ino: 2, Size: 3, MtimeNS: 4, CtimeNS: 6}, "status change time"},
	}
	for _, c := range cases {
		got := base.Describe(c.found)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Describe(%+v) = %q, want it to contain %q", c.found, got, c.want)
		}
	}
}

// TestFileIDOfAndStat: both ways of reading an identity agree, and a
// rewrite that restores the modification time still changes the identity
// where the system has a change time.
func TestFileIDOfAndStat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := FileIDOf(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := StatFileID(p)
	if err != nil || a != b || a.Ino == 0 && a.Dev == 0 {
		t.Fatalf("FileIDOf %+v, StatFileID %+v (%v)", a, b, err)
	}
	fi, _ := os.Stat(p)
	time.Sleep(10 * time.Millisecond) // a later change time on coarse clocks
	if err := os.WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	c, err := StatFileID(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.CtimeNS != 0 && c == a {
		t.Errorf("a rewrite with the old modification time kept the identity %+v", c)
	}
}
