package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// chromiumPath is the browser of the console tests (Debian's chromium package).
const chromiumPath = "/usr/bin/chromium"

// browserWait bounds one wait for something the page should show on a loaded machine.
const browserWait = 60 * time.Second

// EnvScreenshots names a directory the console tests keep their screenshots in; unset,
// they go to a temporary directory named in the test log.
const EnvScreenshots = "SLUICE_E2E_SCREENSHOTS"

// browser is one headless Chromium for a test; each person gets their own browser
// context (their own cookies) and tabs in it.
type browser struct {
	ctx   context.Context
	shots string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	path, err := exec.LookPath(chromiumPath)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: CI installs it (apt-get install -y chromium)", chromiumPath)
		}
		t.Skipf("%s is missing: apt-get install -y chromium", chromiumPath)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		// Tests run as root in containers, where Chromium's sandbox cannot start.
		chromedp.NoSandbox,
		chromedp.WindowSize(1366, 900), // a laptop screen
		chromedp.UserDataDir(t.TempDir()),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser; its context must have no deadline.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	shots := os.Getenv(EnvScreenshots)
	if shots == "" {
		shots = filepath.Join(t.TempDir(), "screenshots")
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))
	t.Logf("console screenshots: %s", shots)
	return &browser{ctx: ctx, shots: shots}
}

// tab is one browser tab, signed in (or not) as one person.
type tab struct {
	t    *testing.T
	b    *browser
	ctx  context.Context
	base string
}

// person opens a tab in a new browser context: cookies of other people's tabs are not
// shared.
func (b *browser) person(t *testing.T, base string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	return &tab{t: t, b: b, ctx: ctx, base: base}
}

// another opens a second tab of the same person (same cookies).
func (tb *tab) another() *tab {
	tb.t.Helper()
	ctx, cancel := chromedp.NewContext(tb.ctx)
	tb.t.Cleanup(cancel)
	require.NoError(tb.t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	return &tab{t: tb.t, b: tb.b, ctx: ctx, base: tb.base}
}

func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	require.NoError(tb.t, chromedp.Do(ctx, steps...))
}

func (tb *tab) open(path string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(tb.base + path))
	tb.waitJS(`document.readyState === "complete"`, "page %s loaded", path)
}

// eval evaluates a JavaScript expression (awaiting a promise) in the page.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	require.NoError(tb.t, err, expr)
	return v
}

// waitJS waits until expr is true in the page; an evaluation that fails (the page is
// navigating) counts as not yet.
func (tb *tab) waitJS(expr, what string, args ...any) {
	tb.t.Helper()
	require.Eventually(tb.t, func() bool {
		ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
		defer cancel()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		return err == nil && ok
	}, browserWait, 50*time.Millisecond, "the page never showed: "+fmt.Sprintf(what, args...)+"\n"+tb.text())
}

// text is the visible text of the page, for failure messages.
func (tb *tab) text() string {
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return s
}

// path is the page's path and query.
func (tb *tab) path() string { return eval[string](tb, `location.pathname + location.search`) }

// click clicks the element from the page's own script: one step in the page, so a live
// refresh that replaces the element cannot fall between finding and clicking it.
func (tb *tab) click(css string) {
	tb.t.Helper()
	tb.waitJS(fmt.Sprintf(`!!document.querySelector(%q)`, css), "%s", css)
	require.True(tb.t, eval[bool](tb, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.click(); return true; })()`, css)), css)
}

// submitAndWait clicks a submit button and waits until the document it leads to loaded.
func (tb *tab) submitAndWait(css string) {
	tb.t.Helper()
	eval[bool](tb, `window.__before = true`)
	tb.click(css)
	tb.waitJS(`window.__before !== true && document.readyState === "complete"`, "the page after clicking %s", css)
}

func (tb *tab) set(css, value string) {
	tb.t.Helper()
	tb.do(chromedp.SetValue(chromedp.CSS(css), value))
}

func (tb *tab) shot(name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserWait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(tb.t, err)
	require.NoError(tb.t, os.WriteFile(filepath.Join(tb.b.shots, name+".png"), png, 0o644))
}

// signIn signs in with token and waits for the runs page.
func (tb *tab) signIn(token, name string) {
	tb.t.Helper()
	tb.open("/ui/signin")
	tb.set("#token", token)
	tb.submitAndWait(`#signin-form button[type="submit"]`)
	tb.waitJS(fmt.Sprintf(`(document.getElementById("whoami") || {}).textContent?.startsWith(%q)`, name), "signed in as %s", name)
}

// status is the run status the run page shows right now ("" while it is reloading).
func (tb *tab) status() string {
	return eval[string](tb, `(document.getElementById("run-status") || {}).textContent || ""`)
}

// postByHand posts a form to path from the page's own script, as a person with the
// browser's developer tools could; csrf adds the page's CSRF token. It returns the
// answer's status.
func (tb *tab) postByHand(path string, csrf bool, fields map[string]string) int {
	tb.t.Helper()
	if fields == nil {
		fields = map[string]string{}
	}
	raw, err := json.Marshal(fields)
	require.NoError(tb.t, err)
	token := `""`
	if csrf {
		token = `document.querySelector('input[name="csrf"]').value`
	}
	return eval[int](tb, fmt.Sprintf(`(() => { const f = new URLSearchParams(%s); const t = %s; if (t) f.set("csrf", t);
		return fetch(%q, {method: "POST", body: f, redirect: "manual"}).then(r => r.status); })()`, raw, token, path))
}

// runIDFromPath reads the run id of a run page's path.
func runIDFromPath(t *testing.T, path string) string {
	t.Helper()
	path, _, _ = strings.Cut(path, "?")
	id, ok := strings.CutPrefix(path, "/ui/runs/")
	require.True(t, ok, "not a run page: %s", path)
	return id
}
