package prefs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestSettingsSourceFollowsTheFile(t *testing.T) {
	p := Paths{ConfigDir: t.TempDir(), StateDir: t.TempDir()}
	src, err := NewSettingsSource(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := src.Get(); !reflect.DeepEqual(got, DefaultSettings()) {
		t.Fatalf("no file: got %+v, want the defaults", got)
	}

	// An edit applies at the next Get.
	write := func(content string) {
		t.Helper()
		if err := WriteFileAtomic(filepath.Join(p.ConfigDir, settingsName), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"max_concurrent_runs": 3}`)
	if got := src.Get().MaxConcurrentRuns; got != 3 {
		t.Fatalf("after an edit: max_concurrent_runs %d, want 3", got)
	}

	// A bad edit keeps the last good settings and says why.
	write(`{"max_concurrent_runs": "lots"}`)
	if got := src.Get().MaxConcurrentRuns; got != 3 {
		t.Fatalf("after a bad edit: max_concurrent_runs %d, want the last good 3", got)
	}
	if src.Err() == nil {
		t.Fatal("a bad file reports no error")
	}

	// Fixing it clears the error; an in-place edit of the same size is seen
	// through its modification time.
	write(`{"max_concurrent_runs": 5}`)
	if got := src.Get().MaxConcurrentRuns; got != 5 || src.Err() != nil {
		t.Fatalf("after the fix: %d, %v", got, src.Err())
	}
	path := filepath.Join(p.ConfigDir, settingsName)
	if err := os.WriteFile(path, []byte(`{"max_concurrent_runs": 6}`), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if got := src.Get().MaxConcurrentRuns; got != 6 {
		t.Fatalf("after an in-place edit: %d, want 6", got)
	}

	// Removing the file brings back the defaults.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if got := src.Get(); !reflect.DeepEqual(got, DefaultSettings()) {
		t.Fatalf("file removed: got %+v, want the defaults", got)
	}
}

func TestSettingsSourceBadFileAtStart(t *testing.T) {
	p := Paths{ConfigDir: t.TempDir(), StateDir: t.TempDir()}
	if err := os.WriteFile(filepath.Join(p.ConfigDir, settingsName), []byte(`{"nope": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := NewSettingsSource(p)
	if err == nil || src.Err() == nil {
		t.Fatal("a bad file at start reports no error")
	}
	if got := src.Get(); !reflect.DeepEqual(got, DefaultSettings()) {
		t.Fatalf("bad file at start: got %+v, want the defaults", got)
	}
}
