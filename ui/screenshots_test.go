package ui

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentgate/agentgate/agentbridge/audit"
	"github.com/agentgate/agentgate/agentbridge/wire"
	"github.com/agentgate/agentgate/prefs"
)

// The screenshots in docs/ (scripts/screenshots.sh drives this): the real
// app under a private display, with a demo home directory, a demo project
// that is a git work tree with npm scripts, allow-lists and past runs, and
// proposals sent through the real socket. This test binary is the agent:
// the script builds it as <demo home>/.local/bin/claude, so the card's
// "From" line names a real process with a plausible path.

// demoProvider and demoClient are the agent's hello data.
const (
	demoProvider = "claude-code"
	demoClient   = "Claude Code 2.1"
)

// demoTool is a stand-in for a node_modules/.bin program of the demo
// project: a real node script printing what the real tool prints.
const demoTool = `#!/usr/bin/env node
const tool = require("path").basename(__filename);
const args = process.argv.slice(2);
const out = (s) => process.stdout.write(s + "\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
  switch (tool) {
  case "vite":
    if (args[0] === "build") {
      out("vite v5.4.11 building for production...");
      await sleep(900);
      out("✓ 214 modules transformed.");
      out("dist/index.html                   0.46 kB │ gzip:  0.30 kB");
      out("dist/assets/index-4f2a9c1e.css   18.20 kB │ gzip:  4.11 kB");
      out("dist/assets/index-b7d1e0a3.js   162.84 kB │ gzip: 52.37 kB");
      out("✓ built in 1.12s");
      return;
    }
    out("");
    out("  VITE v5.4.11  ready in 412 ms");
    out("");
    out("  > Local:   http://localhost:5173/");
    out("  > Network: use --host to expose");
    out("  > press h + enter to show help");
    await sleep(700);
    out("10:42:07 [vite] page reload src/cart.js");
    out("10:42:09 [vite] hmr update /src/components/CouponField.vue");
    setInterval(() => {}, 1 << 30);
    return;
  case "eslint":
    out("");
    out(process.cwd() + "/src/checkout.js");
    out("  14:7   error  'total' is assigned a value but never used  no-unused-vars");
    out("  31:20  error  Expected '===' and instead saw '=='          eqeqeq");
    out("");
    out("✖ 2 problems (2 errors, 0 warnings)");
    process.exitCode = 1;
    return;
  case "playwright":
    out("Running 24 tests using 2 workers");
    out("  ✓  1 [chromium] › cart.spec.ts:12:5 › adds an item (1.4s)");
    setInterval(() => {}, 1 << 30);
    return;
  case "storybook":
    out("@storybook/cli v8.4.2");
    out("");
    out("info => Starting manager..");
    out("info => Starting preview..");
    setInterval(() => {}, 1 << 30);
    return;
  }
})();
`

// demoFiles are the demo project's files (besides node_modules).
var demoFiles = map[string]string{
	"package.json": `{
  "name": "webshop",
  "version": "2.3.0",
  "private": true,
  "scripts": {
    "dev": "vite",
    "build": "vite build",
    "lint": "eslint src --max-warnings=0",
    "test": "jest",
    "test:e2e": "playwright test",
    "storybook": "storybook dev -p 6006"
  }
}
`,
	".gitignore":      "node_modules/\ndist/\n",
	"README.md":       "# webshop\n\nThe shop's storefront: `npm run dev`.\n",
	"src/cart.js":     "export function total(items) {\n  return items.reduce((s, i) => s + i.price * i.qty, 0);\n}\n",
	"src/checkout.js": "import { total } from './cart.js';\n\nexport async function checkout(cart) {\n  return fetch('/api/v2/orders/checkout', { method: 'POST', body: JSON.stringify(cart) });\n}\n",
}

// makeDemoHome fills home (emptied first, except .local/bin where the
// agent binary may live) with the XDG directories, the demo project (a git
// work tree with a change), and allow-lists: several global rules, the
// provider's, the project's, and two project rules added by hand, which
// wait for the trust review. It returns the project root.
func makeDemoHome(t *testing.T, home string) string {
	t.Helper()
	entries, _ := os.ReadDir(home)
	for _, e := range entries {
		if e.Name() != ".local" {
			require.NoError(t, os.RemoveAll(filepath.Join(home, e.Name())))
		}
	}
	for _, sub := range []string{".local/state", ".local/share", ".config", ".cache"} {
		require.NoError(t, os.RemoveAll(filepath.Join(home, sub)))
		require.NoError(t, os.MkdirAll(filepath.Join(home, sub), 0o700))
	}
	project := filepath.Join(home, "src", "webshop")
	for name, content := range demoFiles {
		p := filepath.Join(project, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	bin := filepath.Join(project, "node_modules", ".bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	for _, tool := range []string{"vite", "eslint", "playwright", "storybook", "jest"} {
		require.NoError(t, os.WriteFile(filepath.Join(bin, tool), []byte(demoTool), 0o755))
	}
	git := func(args ...string) {
		cmd := osexec.Command("git", append([]string{"-c", "user.name=Sam Rivera", "-c", "user.email=sam@example.com",
			"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "Storefront with cart and checkout")
	require.NoError(t, os.WriteFile(filepath.Join(project, "src", "cart.js"),
		[]byte(demoFiles["src/cart.js"]+"\nexport const couponPattern = /^[A-Z0-9]{4,12}$/;\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(project, "src", "coupon.js"), []byte("export function applyCoupon() {}\n"), 0o644))

	paths := prefs.Paths{ConfigDir: filepath.Join(home, ".config", "agentgate"), StateDir: filepath.Join(home, ".local", "state", "agentgate")}
	store, err := prefs.Open(paths)
	require.NoError(t, err)
	for _, r := range [][]string{{"git", "status"}, {"git", "diff"}, {"ls"}, {"ls", "-la"}, {"wc"}, {"rg"}, {"git", "log"}} {
		_, err := store.Add(prefs.ScopeGlobal, "", "", r)
		require.NoError(t, err)
	}
	// History for the rule statistics: `wc` last allowed something 40 days
	// ago (unused for 30 days); `ls -la` is covered by `ls` (redundant).
	log, err := audit.Open(audit.Path(paths.StateDir), audit.Options{Host: "app"})
	require.NoError(t, err)
	old := time.Now().Add(-40 * 24 * time.Hour)
	for i, argv := range [][]string{{"wc", "-l", "src/cart.js"}, {"wc", "-l", "src/checkout.js"}} {
		at := old.Add(time.Duration(i) * time.Minute)
		require.NoError(t, log.Append(audit.Entry{Time: at, Kind: audit.KindDecision, Provider: demoProvider, Decision: audit.DecisionRule,
			Argv: argv, ProjectRoot: project, Rule: &audit.Rule{Text: "wc", Scope: "global", File: paths.GlobalFile(), Line: 5}}))
	}
	require.NoError(t, log.Close())
	// A grant given at `agentgate run`'s prompt: the Playwright suite, in
	// this project, for every agent, for an hour.
	npm, err := osexec.LookPath("npm")
	require.NoError(t, err)
	_, err = prefs.OpenGrants(paths).Give(prefs.GrantRequest{Kind: prefs.GrantExact, Argv: []string{"npm", "run", "test:e2e", "--", "--project=chromium"},
		Executable: npm, Project: project, AllProviders: true, By: "terminal", For: time.Hour})
	require.NoError(t, err)
	for _, r := range [][]string{{"npm", "run", "lint"}, {"npm", "run", "build"}} {
		_, err := store.Add(prefs.ScopeProvider, demoProvider, "", r)
		require.NoError(t, err)
	}
	for _, r := range [][]string{{"npm", "run", "dev"}, {"npm", "run", "test:e2e"}, {"npm", "run", "storybook"}} {
		_, err := store.Add(prefs.ScopeProject, "", project, r)
		require.NoError(t, err)
	}
	f, err := os.OpenFile(prefs.ProjectFile(project), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("npm publish\ngit push --force origin main\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return project
}

// startDemoApp starts bin with home as the person's home and says hello
// as the demo agent.
func startDemoApp(t *testing.T, bin, home, project, theme string) *e2eApp {
	t.Helper()
	runtime, err := os.MkdirTemp("", "agrun")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(runtime) })
	e := &e2eApp{t: t, dir: home, socket: filepath.Join(runtime, "bridge.sock"), layout: filepath.Join(runtime, "layout.json"), project: project}
	e.cmd = osexec.Command(bin)
	e.cmd.Dir = home
	e.cmd.Env = append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_RUNTIME_DIR="+runtime, "AGENTGATE_SOCKET="+e.socket, "AGENTGATE_UI_LAYOUT_FILE="+e.layout,
		"LANG=C.UTF-8", "SHELL=/bin/sh", "DBUS_SESSION_BUS_ADDRESS=disabled:", "FYNE_THEME="+theme,
		"NPM_CONFIG_UPDATE_NOTIFIER=false", "NO_COLOR=1")
	e.launch(filepath.Join(runtime, "app.log"), demoProvider, demoClient)
	return e
}

// proposeWith proposes argv with a timeout (0: the default) and reason.
func (e *e2eApp) proposeWith(timeout time.Duration, reason string, argv ...string) wire.ProposeResult {
	e.t.Helper()
	p := wire.ProposeParams{Argv: argv, Cwd: ".", Reason: reason}
	if timeout > 0 {
		ms := timeout.Milliseconds()
		p.TimeoutMS = &ms
	}
	r, err := e.c.Propose(context.Background(), p)
	require.NoError(e.t, err, "proposing %v", argv)
	return r
}

// pastRuns runs the demo history through the socket, each allowed by a
// rule: exited 0, exited 1, timed out, cancelled, and one left running.
func pastRuns(t *testing.T, e *e2eApp) (running string) {
	t.Helper()
	done := func(p wire.ProposeResult, want string) {
		require.NotEqual(t, "pending", p.State, "allowed by a rule")
		require.Equal(t, want, e.waitDone(p.RunID))
	}
	done(e.proposeWith(0, "", "git", "status", "--short"), "exited")
	done(e.proposeWith(0, "", "npm", "run", "lint"), "exited")
	done(e.proposeWith(0, "", "npm", "run", "build"), "exited")
	done(e.proposeWith(4*time.Second, "", "npm", "run", "test:e2e"), "timed_out")
	sb := e.proposeWith(0, "", "npm", "run", "storybook")
	time.Sleep(2 * time.Second)
	_, err := e.c.Cancel(context.Background(), sb.RunID)
	require.NoError(t, err)
	require.Equal(t, "cancelled", e.waitDone(sb.RunID))
	dev := e.proposeWith(10*time.Minute, "", "npm", "run", "dev")
	require.Equal(t, "running", dev.State)
	time.Sleep(2 * time.Second) // its first output lines
	return dev.RunID
}

// rootShot saves the part of the screen that window wid covers as path:
// `import -window root` cropped to the window's geometry, so what is saved
// is what a person sees on the screen.
func rootShot(t *testing.T, wid, path string) {
	t.Helper()
	xdo(t, "windowraise", wid)
	time.Sleep(700 * time.Millisecond) // the frames after the last change
	out, err := osexec.Command("xdotool", "getwindowgeometry", "--shell", wid).Output()
	require.NoError(t, err)
	geo := map[string]int{}
	for _, line := range strings.Fields(string(out)) {
		if k, v, ok := strings.Cut(line, "="); ok {
			geo[k], _ = strconv.Atoi(v)
		}
	}
	crop := fmt.Sprintf("%dx%d+%d+%d", geo["WIDTH"], geo["HEIGHT"], geo["X"], geo["Y"])
	out, err = osexec.Command("import", "-window", "root", "-crop", crop, "+repage", path).CombinedOutput()
	require.NoError(t, err, "import: %s", out)
	t.Logf("saved %s (%s)", path, crop)
}

// TestScreenshots saves the docs/ screenshots, in the light and the dark
// theme, when AGENTGATE_SCREENSHOTS names the directory (see
// scripts/screenshots.sh). AGENTGATE_BIN is the app (default: built from
// this tree); AGENTGATE_DEMO_HOME is the demo home (default: a temporary
// directory).
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("AGENTGATE_SCREENSHOTS")
	if dir == "" {
		t.Skip("set AGENTGATE_SCREENSHOTS=<dir> (scripts/screenshots.sh) to save the screenshots")
	}
	requireDisplay(t)
	bin := os.Getenv("AGENTGATE_BIN")
	if bin == "" {
		bin = buildApp(t)
	}
	home := os.Getenv("AGENTGATE_DEMO_HOME")
	if home == "" {
		home = filepath.Join(t.TempDir(), "home", "sam")
	}
	require.NoError(t, os.MkdirAll(home, 0o700))
	for _, theme := range []string{"light", "dark"} {
		suffix := map[string]string{"light": "", "dark": "-dark"}[theme]
		shot := func(wid, name string) { rootShot(t, wid, filepath.Join(dir, name+suffix+".png")) }
		project := makeDemoHome(t, home)
		e := startDemoApp(t, bin, home, project, theme)
		running := pastRuns(t, e)

		// Processes, with the running dev server selected.
		main := window(t, "Processes")
		xdo(t, "windowfocus", "--sync", main)
		time.Sleep(500 * time.Millisecond)
		click(t, main, [2]int{300, 123})
		shot(main, "processes")

		// Preferences: Global, then the project with its trust review.
		xdo(t, "key", "--window", main, "ctrl+comma")
		prefsWin := window(t, "Preferences")
		time.Sleep(2 * time.Second) // the rule statistics are read from the audit log in the background
		shot(prefsWin, "preferences")
		click(t, prefsWin, [2]int{120, projectRowY})
		shot(prefsWin, "preferences-project")

		// The card: a normal command, Always allow ▾ → Program → Global,
		// a long command, one with a bidi override and a zero-width space.
		p := e.proposeWith(0, "Run the unit tests after changing the coupon validation in src/cart.js.",
			"npm", "test", "--", "--watch=false")
		l := e.armedCard(p.RunID, false)
		card := window(t, "approve a command")
		shot(card, "card")
		click(t, card, l.Allow)
		l = e.armedCard(p.RunID, true)
		t.Logf("card layout with the panel open: %+v", l)
		click(t, card, l.Program)
		shot(card, "always-allow")
		// The same panel, "for 15 minutes": a temporary grant instead of
		// a rule. Given, it approves the command.
		// The launcher warning scrolled the panel: read the layout again.
		l = e.cardLayoutWhere(p.RunID, func(l cardLayout) bool { return l.UseExact != [2]int{} })
		require.Len(t, l.How, 4, "how-long options: Always, 15 minutes, 1 hour, Until quit")
		click(t, card, l.How[1])
		// npm runs other code: only its exact command can be granted.
		time.Sleep(300 * time.Millisecond)
		l = e.cardLayoutWhere(p.RunID, func(l cardLayout) bool { return l.UseExact != [2]int{} })
		click(t, card, l.UseExact)
		l = e.cardLayoutWhere(p.RunID, func(l cardLayout) bool { return l.UseExact == [2]int{} })
		shot(card, "card-grant")
		click(t, card, l.Confirm)
		require.Equal(t, "exited", e.waitDone(p.RunID))

		for _, c := range []struct {
			name, reason string
			argv         []string
		}{
			{"card-long", "Reproduce the 500 on checkout with a coupon against staging.", longCurl},
			{"card-bidi", "Make the invoice available for download on the order page.",
				[]string{"cp", "incoming/invoice_2024_\u202efdp.exe", "public/downloads/invoice\u200b.pdf"}},
			// The rule `git diff` does not cover --ext-diff (it runs a
			// program the repository's config names): the card says so.
			{"card-guard", "Show the coupon change with the repository's diff tool.",
				[]string{"git", "diff", "--ext-diff", "src/cart.js"}},
		} {
			p := e.proposeWith(0, c.reason, c.argv...)
			e.armedCard(p.RunID, false)
			shot(window(t, "approve a command"), c.name)
			_, err := e.c.Cancel(context.Background(), p.RunID)
			require.NoError(t, err)
		}
		// Preferences ▸ Temporary grants: the card's grant and the
		// terminal's, with their time left.
		xdo(t, "windowraise", prefsWin)
		xdo(t, "windowfocus", "--sync", prefsWin)
		click(t, prefsWin, [2]int{120, grantsRowY})
		shot(prefsWin, "preferences-grants")

		_, _ = e.c.Cancel(context.Background(), running)
		e.waitDone(running)
		e.stop()
	}
}

// projectRowY is the y of the third scope row (the project) in the
// Preferences window, in window pixels.
const projectRowY = 160

// grantsRowY is the y of the fourth row (Temporary grants).
const grantsRowY = 198

// longCurl is a long command that needs scrolling on the card.
var longCurl = []string{"curl", "-sS", "--fail-with-body", "-X", "POST", "https://staging.webshop.example/api/v2/orders/checkout",
	"-H", "Content-Type: application/json", "-H", "Accept: application/json",
	"-H", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJlMmUtYm90Iiwic2NvcGUiOiJjaGVja291dCJ9.Jx1vQ2",
	"-H", "X-Request-Id: 3f9c2a10-7d4e-4b8e-9a51-0c2d7e6f1b94", "-H", "X-Debug-Trace: 1", "-H", "User-Agent: webshop-e2e/2.3.0",
	"--data", `{"cart_id":"c_8f41b2","coupon":"SPRING25","currency":"EUR","items":[{"sku":"TSHIRT-BLK-M","qty":2},{"sku":"MUG-WHT","qty":1}],"shipping":{"method":"dhl_express","country":"DE"}}`,
	"-w", `\n%{http_code} %{time_total}s\n`, "-o", "/tmp/checkout.json"}
