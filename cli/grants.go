package cli

import (
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"
)

// allowUsage is the usage line of `agentgate allow`.
const allowUsage = "usage: agentgate allow list|add|rm|check|trust [--provider NAME] [--project DIR] [--scope global|provider|project] [-- ARGV...]\n" +
	"       agentgate allow list --stats [--provider NAME] [--project DIR]\n" +
	"       agentgate allow grants [--project DIR]\n" +
	"       agentgate allow revoke ID | --all"

// allowGrants is `agentgate allow grants [--project DIR]`: the temporary
// grants in force, soonest to end first, with the time each has left, what
// it allows (program or exact command, and the executable it is bound to),
// where (project) and for whom (every agent, or one provider). With
// --project, only that project's grants.
func allowGrants(e env, project string, args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(e.stderr, "agentgate allow grants takes no command")
		return exitDeclined
	}
	root := ""
	if project != "" {
		if !filepath.IsAbs(project) {
			project = filepath.Join(e.cwd, project)
		}
		r, err := prefs.ProjectRoot(project)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentgate allow grants: the project %s: %v\n", display.Word(project), err)
			return exitDeclined
		}
		root = r
		if err := e.checkDirs(root); err != nil {
			fmt.Fprintf(e.stderr, "agentgate allow grants: %v\n", err)
			return exitDeclined
		}
	}
	grants := prefs.OpenGrants(e.paths)
	grants.Now = e.now
	list, err := grants.List()
	if err != nil {
		fmt.Fprintf(e.stderr, "agentgate allow grants: %v\n", err)
		return exitDeclined
	}
	now := e.now()
	var shown []prefs.Grant
	for _, g := range list {
		if root == "" || g.Project == root {
			shown = append(shown, g)
		}
	}
	if len(shown) == 0 {
		fmt.Fprintln(e.stdout, "No temporary grants are in force.")
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEFT\tALLOWS\tPROGRAM\tPROJECT\tFOR")
	for _, g := range shown {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.LeftText(now), g.AllowsText(), display.Word(g.Executable), display.Word(g.Project), g.ForText())
	}
	tw.Flush()
	fmt.Fprintln(e.stdout, "End one with `agentgate allow revoke ID`, all with `agentgate allow revoke --all`.")
	return exitOK
}

// allowRevoke is `agentgate allow revoke ID` and `agentgate allow revoke
// --all`: it ends grants at once, in every host (each reads the grants on
// every decision).
func allowRevoke(e env, all bool, args []string) int {
	grants := prefs.OpenGrants(e.paths)
	grants.Now = e.now
	switch {
	case all && len(args) == 0:
		n, err := grants.RevokeAll()
		if err != nil {
			fmt.Fprintf(e.stderr, "agentgate allow revoke: %v\n", err)
			return exitDeclined
		}
		fmt.Fprintf(e.stdout, "Revoked every temporary grant (%d).\n", n)
		return exitOK
	case !all && len(args) == 1:
		if err := grants.Revoke(args[0]); err != nil {
			fmt.Fprintf(e.stderr, "agentgate allow revoke: %v\n", err)
			return exitDeclined
		}
		fmt.Fprintf(e.stdout, "Revoked grant %s.\n", display.Word(args[0]))
		return exitOK
	}
	fmt.Fprintln(e.stderr, "usage: agentgate allow revoke ID | --all   (the ids are listed by `agentgate allow grants`)")
	return exitDeclined
}
