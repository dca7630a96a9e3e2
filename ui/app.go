// Package ui is agentgate's desktop app: approval cards, the tray, the
// Preferences window and the Processes window. It is the only package that
// knows Fyne.
//
// It is a thin view: the logic lives in ui/model (Queue, CardModel,
// ProcessesModel, AllowedModel, Throttle, FollowRuns), tested without a
// display, and the gate behind the windows is assembled by agentbridge/host.
// See docs/desktop.md.
package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"github.com/adrg/xdg"

	"github.com/agentgate/agentgate/agentbridge"
	"github.com/agentgate/agentgate/agentbridge/host"
	"github.com/agentgate/agentgate/agentbridge/rulestats"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/exec"
	"github.com/agentgate/agentgate/packaging"
	"github.com/agentgate/agentgate/prefs"
	"github.com/agentgate/agentgate/prefs/agents"
	"github.com/agentgate/agentgate/ui/model"
)

// AppID is the application identifier, the same as in FyneApp.toml.
const AppID = "dev.agentgate.agentgate"

// Main starts the desktop app and returns the process exit code when it
// quits: 0 after Quit, and 0 when another agentgate already runs (it was
// asked to show its window); 1 when the app cannot start (the reason is
// printed on standard error). When no window can be opened (no display, or
// the GL driver fails) it serves the bridge without windows instead
// (runHeadless); an agentgate serving without windows is asked to hand over
// to this one when this one can open windows.
func Main(background bool) int {
	if why := noDisplayReason(); why != "" {
		return runHeadless(why)
	}
	if err := run(background); err != nil {
		if errors.Is(err, agentbridge.ErrAlreadyRunning) {
			fmt.Fprintln(os.Stderr, "agentgate is already running; its window was brought forward.")
			return 0
		}
		fmt.Fprintln(os.Stderr, "agentgate:", err)
		return 1
	}
	return 0
}

// BackgroundFlag is the argument that starts the desktop app without
// showing the Processes window (Main(true)): how the autostart entry starts
// it at login. A card still shows when an agent proposes something, and
// starting agentgate again (or the tray) brings the window forward.
const BackgroundFlag = packaging.BackgroundFlag

// run assembles the gate (agentbridge/host), builds the windows over it
// and runs the Fyne event loop until Quit; with background set the
// Processes window is not shown at start.
func run(background bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// agentgate's own places: refused where commands may write
	// (prefs.CheckDirs; the app serves no one project).
	paths, sock, err := wire.ResolveDirs()
	if err != nil {
		return err
	}
	// A disk cap that cut into the history span is told to the person (it
	// may happen during Open, before the app exists: queued until then).
	historyCaps := make(chan string, 8)
	h, err := host.Open(ctx, host.Options{Paths: paths, Kind: exec.HostApp, AuditHost: "app", Socket: sock, TakeOver: true,
		OnHistoryCap: func(msg string) {
			select {
			case historyCaps <- msg:
			default:
			}
		}})
	if err != nil {
		return err
	}
	defer h.Close()
	if h.TookOver {
		fmt.Fprintln(os.Stderr, "agentgate: took over from the agentgate that served without windows; its running commands finish there and show in Processes")
	}
	// After Open: the runs' environment is taken, and must not carry the
	// address that switches D-Bus off.
	bus := sessionBusPresent()
	if !bus {
		fmt.Fprintln(os.Stderr, "agentgate: no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is none at $XDG_RUNTIME_DIR/bus): the tray icon and notifications are off, and none is started")
	}

	a := app.NewWithID(AppID)
	go func() {
		for {
			select {
			case msg := <-historyCaps:
				fmt.Fprintln(os.Stderr, "agentgate:", msg)
				fyne.Do(func() {
					a.SendNotification(fyne.NewNotification("agentgate: history removed to stay under its disk cap", msg))
				})
			case <-ctx.Done():
				return
			}
		}
	}()
	exe, _ := os.Executable()
	d := &desk{
		app: a, queue: &model.Queue{}, rules: h.Store, gate: h.Broker, paths: paths, executor: h.Executor,
		grants: h.Grants, instance: h.Instance.ID(), stats: ruleStats(h),
		past:      model.CachedPast(h.AuditPath),
		autostart: model.Autostart{ConfigHome: xdg.ConfigHome, Executable: exe},
		tray:      bus && trayHostPresent(),
		notify:    bus,
	}
	d.build()
	h.Broker.SetApprover(d.queue)
	h.Serve(agentbridge.ServerOptions{OnShow: func() { fyne.Do(d.showMain) }})
	model.FollowRuns(ctx, d.procs, func() {
		fyne.Do(d.procView.refresh)
		d.ticker.Poke()
		for _, rec := range d.procs.ProtectedAlerts() {
			text := model.ProtectedAlertText(&rec)
			fmt.Fprintln(os.Stderr, "agentgate: files that steer agents changed:", text)
			fyne.Do(func() { d.sendNotification("agentgate: files that steer agents changed", text) })
		}
	})
	// Agents update themselves: warn when one setup wired is newer than the
	// versions agentgate was tested with (off every hook's path).
	go func() {
		for _, w := range agents.CheckWired(ctx, paths.StateDir) {
			fmt.Fprintln(os.Stderr, "agentgate:", w)
			fyne.Do(func() { d.sendNotification("agentgate: check your agent", w) })
		}
	}()
	if h.SettingsErr != nil {
		fyne.Do(func() { dialog.ShowError(fmt.Errorf("%w — using the default settings", h.SettingsErr), d.main) })
	}
	if background {
		d.app.Run()
	} else {
		d.main.ShowAndRun()
	}
	return nil
}

// ruleStats returns the function that gives Preferences the figures of
// rules: uses from the audit log, counted incrementally in the state
// directory, and the store's redundancy check.
func ruleStats(h *host.Host) func([]prefs.Rule) ([]rulestats.Stat, error) {
	counter := rulestats.New(h.Paths.StateDir, h.AuditPath)
	return func(rules []prefs.Rule) ([]rulestats.Stat, error) { return counter.Stats(h.Store.CoveringRule, rules) }
}

// desk is the running desktop app: its windows and what they show.
type desk struct {
	// app is the Fyne app.
	app fyne.App
	// queue holds the pending proposals (the broker's Approver).
	queue *model.Queue
	// rules are the allow-lists.
	rules model.RuleStore
	// gate cancels runs and stops everything.
	gate model.Gate
	// paths locate the configuration and state.
	paths prefs.Paths
	// executor is this app's executor (nil in tests): live output, Quit.
	executor *exec.Executor
	// past returns recent commands for the rule preview.
	past func() []prefs.PastCommand
	// grants are the temporary grants (nil: none offered or listed).
	grants *prefs.Grants
	// instance is this app instance's id, for "until agentgate quits"
	// grants ("": not offered).
	instance string
	// stats returns the rules' figures for Preferences (nil: none shown).
	stats func([]prefs.Rule) ([]rulestats.Stat, error)
	// autostart switches "Start at login".
	autostart model.Autostart
	// tray is true when a system tray shows the tray icon.
	tray bool
	// notify is true when desktop notifications can be sent (a session bus).
	notify bool

	// main is the Processes window, the app's main window.
	main fyne.Window
	// procs is the Processes model.
	procs *model.ProcessesModel
	// procView is the Processes window's content.
	procView *processesView
	// card is the approval card.
	card *cardWindow
	// ticker refreshes the card's countdown and the live runs once a
	// second, only while there are any.
	ticker *model.Ticker
	// prefsWin is the open Preferences window (nil when closed).
	prefsWin fyne.Window
}

// build creates the windows, menus, tray and the queue's listeners.
func (d *desk) build() {
	d.procs = &model.ProcessesModel{StateDir: d.paths.StateDir}
	_ = d.procs.LoadAll()
	card := &model.CardModel{Queue: d.queue, Rules: d.rules, Instance: d.instance}
	if d.grants != nil {
		card.Grants = d.grants
	}
	cv := newCardView(card, d.past)
	position := func(w fyne.Window) { positionTopRight(w) }
	if _, real := d.app.(desktop.App); !real {
		position = nil
	}
	d.card = newCardWindow(d.app, cv, position)
	cv.onHide = d.queueChanged

	d.main = d.app.NewWindow("agentgate — Processes")
	d.procView = newProcessesView(d.procs, d.gate, d.liveReader(), func() { d.card.showAgain() })
	d.main.SetContent(d.procView.root)
	d.main.Resize(fyne.NewSize(960, 600))
	d.main.SetMaster()
	d.main.SetMainMenu(fyne.NewMainMenu(fyne.NewMenu("agentgate", d.menuItems(false)...)))
	d.main.SetCloseIntercept(d.closeMain)
	d.main.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyComma, Modifier: fyne.KeyModifierShortcutDefault},
		func(fyne.Shortcut) { d.showPrefs() })
	d.procView.refresh()

	d.queue.OnChange = func() { fyne.Do(d.queueChanged) }
	d.queue.OnArrive = func(req *agentbridge.ApprovalRequest) {
		fyne.Do(func() {
			if card.Hidden() {
				d.sendNotification("agentgate: a command waits for your answer", model.NotificationText(req))
			}
		})
	}
	d.queue.OnExpire = func(req *agentbridge.ApprovalRequest) {
		d.sendNotification("agentgate: a proposal expired unanswered", model.NotificationText(req))
	}
	d.updateTray()
	// Once a second while a card counts down or a run is live; never when
	// idle.
	d.ticker = &model.Ticker{Interval: time.Second, Tick: func() { fyne.Do(d.tick) },
		Needed: func() bool { return d.queue.Len() > 0 || len(d.procs.Running()) > 0 }}
}

// menuItems returns the app menu: Processes… (tray only), Preferences…,
// Stop everything…, Quit.
func (d *desk) menuItems(tray bool) []*fyne.MenuItem {
	var items []*fyne.MenuItem
	if tray {
		items = append(items, fyne.NewMenuItem("Processes…", d.showMain))
	}
	quit := fyne.NewMenuItem("Quit", d.quit)
	quit.IsQuit = true
	return append(items,
		fyne.NewMenuItem("Preferences…", d.showPrefs),
		fyne.NewMenuItem("Stop everything…", d.confirmStopEverything),
		fyne.NewMenuItemSeparator(),
		quit,
	)
}

// queueChanged updates the card, the banner and the tray.
func (d *desk) queueChanged() {
	d.ticker.Poke()
	d.card.refresh()
	n := d.queue.Len()
	if d.card.visible {
		d.procView.setPending(0)
	} else {
		d.procView.setPending(n)
	}
	d.updateTray()
}

// sendNotification shows a desktop notification, where there is a session
// bus to send it on.
func (d *desk) sendNotification(title, text string) {
	if d.notify {
		d.app.SendNotification(fyne.NewNotification(title, text))
	}
}

// updateTray sets the tray icon and menu (pending proposals first), where a
// system tray shows them.
func (d *desk) updateTray() {
	da, ok := d.app.(desktop.App)
	if !ok || !d.tray {
		return
	}
	pending := d.queue.Pending()
	icon := fyne.NewStaticResource("tray-idle.png", packaging.TrayIdlePNG)
	var items []*fyne.MenuItem
	if len(pending) > 0 {
		icon = fyne.NewStaticResource("tray-pending.png", packaging.TrayPendingPNG)
		for _, req := range pending {
			id := req.ID
			items = append(items, fyne.NewMenuItem(model.TrayLabel(req), func() {
				d.queue.Select(id)
				d.card.showAgain()
			}))
		}
		items = append(items, fyne.NewMenuItemSeparator())
	}
	items = append(items, d.menuItems(true)...)
	da.SetSystemTrayMenu(fyne.NewMenu("agentgate", items...))
	da.SetSystemTrayIcon(icon)
}

// tick runs every second: the card's countdown and the elapsed times.
func (d *desk) tick() {
	d.card.view.tick()
	if len(d.procs.Running()) > 0 {
		d.procView.table.Refresh()
		d.procView.showDetails()
	}
}

// liveReader reads this app's own runs' output from the executor.
func (d *desk) liveReader() model.LiveReader {
	if d.executor == nil {
		return nil
	}
	return func(id string, s exec.Stream, cursor int64, n int) (exec.Chunk, bool, error) {
		r, ok := d.executor.Get(id)
		if !ok {
			return exec.Chunk{}, false, nil
		}
		c, err := r.Read(s, cursor, n)
		return c, true, err
	}
}

// showMain brings the Processes window forward.
func (d *desk) showMain() {
	d.main.Show()
	d.main.RequestFocus()
	if d.queue.Len() > 0 && d.card.view.model.Hidden() {
		d.procView.setPending(d.queue.Len())
	}
}

// showPrefs opens Preferences ▸ Agent ▸ Allowed commands….
func (d *desk) showPrefs() {
	if d.prefsWin != nil {
		d.prefsWin.Show()
		d.prefsWin.RequestFocus()
		return
	}
	providers, projects := d.procs.FilterOptions()
	for _, pc := range d.past() {
		if pc.Provider != "" {
			providers = append(providers, pc.Provider)
		}
		if pc.Project != "" {
			projects = append(projects, pc.Project)
		}
	}
	allowed := &model.AllowedModel{Store: d.rules, Past: d.past, Stats: d.stats}
	if d.grants != nil {
		allowed.Grants = d.grants
	}
	pv := newPrefsView(allowed, model.KnownScopes(d.paths, providers, projects), d.app.OpenURL, d.autostart)
	w := d.app.NewWindow("agentgate — Preferences ▸ Agent ▸ Allowed commands")
	w.SetContent(pv.root)
	w.Resize(fyne.NewSize(900, 680))
	w.SetOnClosed(func() { pv.close(); d.prefsWin = nil })
	d.prefsWin = w
	w.Show()
}

// confirmStopEverything asks once, then denies every pending proposal and
// cancels every running command of every host.
func (d *desk) confirmStopEverything() {
	d.showMain()
	dialog.ShowConfirm("Stop everything?",
		fmt.Sprintf("Deny %d waiting proposals and cancel %d running commands?", d.queue.Len(), len(d.procs.RunningAll())),
		func(ok bool) {
			if ok {
				model.StopEverything(d.gate, d.queue, d.procs)
			}
		}, d.main)
}

// closeMain hides the main window when a tray can bring it back, and asks
// whether to quit otherwise.
func (d *desk) closeMain() {
	if d.tray {
		d.main.Hide()
		return
	}
	d.quit()
}

// quit asks before quitting when commands run or proposals wait (they are
// cancelled and denied), and quits at once otherwise.
func (d *desk) quit() {
	running, pending := 0, d.queue.Len()
	if d.executor != nil {
		for _, r := range d.executor.Runs() {
			if !r.Record().State.Final() {
				running++
			}
		}
	}
	if running == 0 && pending == 0 {
		d.app.Quit()
		return
	}
	d.showMain()
	dialog.ShowConfirm("Quit agentgate?",
		fmt.Sprintf("%d commands are running and %d proposals wait. Quitting cancels the commands and denies the proposals.", running, pending),
		func(ok bool) {
			if ok {
				d.queue.DenyAll("agentgate was quit by the person")
				if d.executor != nil {
					d.executor.CancelAll()
				}
				d.app.Quit()
			}
		}, d.main)
}
