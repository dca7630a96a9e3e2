package model

import (
	"sync"
	"time"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/exec/display"
	"github.com/agentgate/agentgate/prefs"
)

// NotificationText is a notification's body for req: "provider: command"
// (just the command without a provider), the provider escaped (EscapeText)
// and the command in display form — for a hook request, the agent's shell
// line escaped.
func NotificationText(req *agentbridge.ApprovalRequest) string {
	cmd := display.Command(req.Command.Argv)
	if req.ThroughAgentShell {
		cmd = EscapeText(req.CommandLine)
	}
	if req.Provider != "" {
		return EscapeText(req.Provider) + ": " + cmd
	}
	return cmd
}

// trayLabelRunes is the longest tray menu label, in characters.
const trayLabelRunes = 60

// TrayLabel is the tray menu entry for a waiting proposal: "Answer: " and
// its NotificationText, cut to trayLabelRunes characters with "…" when
// longer.
func TrayLabel(req *agentbridge.ApprovalRequest) string {
	return "Answer: " + Ellipsize(NotificationText(req), trayLabelRunes)
}

// Ellipsize returns s cut to limit characters (runes), the last one "…",
// when it is longer; a limit below 1 counts as 1.
func Ellipsize(s string, limit int) string {
	limit = max(limit, 1)
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	return string(r[:limit-1]) + "…"
}

// CachedPast returns a function reading the audit log's recent commands for
// the rule preview, re-read at most every 10 s.
func CachedPast(path string) func() []prefs.PastCommand {
	var mu sync.Mutex
	var at time.Time
	var past []prefs.PastCommand
	return func() []prefs.PastCommand {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(at) > 10*time.Second {
			past, _ = audit.PastCommands(path, 1000)
			at = time.Now()
		}
		return past
	}
}
