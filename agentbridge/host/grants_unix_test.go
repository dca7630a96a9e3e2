//go:build unix

package host_test

import (
	"context"
	"testing"

	"github.com/agentgate/agentgate/agentbridge/host"
	"github.com/agentgate/agentgate/prefs"
)

// TestHostInstanceEndsUntilQuitGrants: a host that serves a socket is an
// app instance; a grant until it quits is honoured while it runs and ends
// when it closes.
func TestHostInstanceEndsUntilQuitGrants(t *testing.T) {
	opts := options(t)
	h, err := host.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Instance == nil || h.Grants == nil {
		t.Fatal("a socket host holds no app instance or grants")
	}
	project := t.TempDir()
	q := prefs.GrantQuery{Argv: []string{"true"}, Executable: "/bin/true", Project: project, Provider: "claude"}
	if _, err := h.Grants.Give(prefs.GrantRequest{Kind: prefs.GrantProgram, Argv: q.Argv, Executable: q.Executable, Project: project,
		Provider: "claude", By: "card", Instance: h.Instance.ID()}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := prefs.OpenGrants(opts.Paths).Match(q); !ok || err != nil {
		t.Fatalf("until-quit grant while the app runs: %v %v", ok, err)
	}
	h.Close()
	if _, ok, _ := prefs.OpenGrants(opts.Paths).Match(q); ok {
		t.Fatal("an until-quit grant outlived the app")
	}
	if list, _ := prefs.OpenGrants(opts.Paths).List(); len(list) != 0 {
		t.Fatalf("grants left after quit: %+v", list)
	}
	// agentgate run (no socket) is no app instance.
	opts2 := options(t)
	opts2.Socket = ""
	h2, err := host.Open(context.Background(), opts2)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if h2.Instance != nil {
		t.Fatal("a host without a socket holds an app instance")
	}
}
