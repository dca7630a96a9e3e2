// Package model is the desktop app's windows without the windows: the
// queue of proposals waiting for a person (the app's agentbridge.Approver),
// the approval card's model (which proposal it shows, when its buttons are
// live, what each does), the Processes window's model (every host's run
// records, filtered, and how they read), Preferences ▸ Allowed commands
// (the allow-lists as a person edits them), and the text helpers they share
// (escaping agent text, durations, sizes, paths relative to home).
//
// It knows no window toolkit: package ui draws these models with Fyne and
// stays a thin view. Everything here is tested under -race and compiles for
// every platform (make test); the fakes its tests and ui's share live in
// ui/model/modeltest. See docs/desktop.md.
package model
