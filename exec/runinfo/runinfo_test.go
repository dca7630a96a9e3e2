package runinfo

import (
	"sort"
	"strings"
	"testing"
)

func TestCheckID(t *testing.T) {
	cases := []struct {
		id string
		ok bool
	}{
		{"20260101T000000.000000000Z-abcd", true}, {"a", true}, {"A-b_c.d", true},
		{"", false}, {".hidden", false}, {"a/b", false}, {`a\b`, false}, {"a b", false},
		{"..", false}, {"é", false}, {strings.Repeat("a", 128), true}, {strings.Repeat("a", 129), false},
	}
	for _, tc := range cases {
		if got := CheckID(tc.id) == nil; got != tc.ok {
			t.Errorf("CheckID(%q) ok = %v, want %v", tc.id, got, tc.ok)
		}
	}
}

// TestNewID: ids are valid, of one length, distinct, and sort by the time
// they were made.
func TestNewID(t *testing.T) {
	var ids []string
	for range 100 {
		id := NewID()
		if err := CheckID(id); err != nil {
			t.Fatal(err)
		}
		if len(ids) > 0 && len(id) != len(ids[0]) {
			t.Fatalf("id %q has length %d, earlier %q %d", id, len(id), ids[0], len(ids[0]))
		}
		ids = append(ids, id)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("id %q made twice", id)
		}
		seen[id] = true
	}
	times := make([]string, len(ids))
	for i, id := range ids {
		times[i] = id[:len(idTimeLayout)]
	}
	if !sort.StringsAreSorted(times) {
		t.Fatalf("ids do not sort by time: %v", ids)
	}
}

func TestConfinementSummary(t *testing.T) {
	cases := []struct {
		c    Confinement
		want string
	}{
		{Confinement{}, ""},
		{Confinement{Writes: []string{"project", "temp", "cache"}, Network: "any"}, "writes: project, temp, cache"},
		{Confinement{Writes: []string{"project", "temp", "cache", "~/.npm"}, Network: "none", NetworkBy: "namespace"}, "writes: project, temp, cache, ~/.npm; network: none"},
		{Confinement{Writes: []string{"project"}, Network: "none", NetworkBy: "landlock-tcp"}, "writes: project; network: none (TCP only)"},
		{Confinement{Writes: []string{"project", "temp", "cache", "~/.npm", "~/go/pkg/mod", "~/.m2/repository", "~/.cargo/git"}}, "writes: project, temp, cache, ~/.npm, ~/go/pkg/mod and 2 more"},
		{Confinement{Unconfined: "approved without write confinement", Network: "any"}, "writes: not confined (approved without write confinement)"},
	}
	for _, c := range cases {
		if got := c.c.Summary(); got != c.want {
			t.Errorf("Summary() = %q, want %q", got, c.want)
		}
	}
}
