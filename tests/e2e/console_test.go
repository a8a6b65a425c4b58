package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
)

// consolePrincipals: an admin, two operators, a viewer and an operator of tenant acme.
func consolePrincipals(t *testing.T, dir string) string {
	t.Helper()
	auth := filepath.Join(dir, "principals.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(`- {name: root, token: console-admin-1, role: admin}
- {name: otto, token: console-otto-1, role: operator}
- {name: vera, token: console-vera-1, role: operator}
- {name: vic, token: console-vic-1, role: viewer}
- {name: acme-bot, token: console-acme-1, role: operator, tenant: acme}
`), 0o600))
	return auth
}

// ordersTemplate generates rows at a rate into stdout; its params cover the form's
// field kinds, a secret one included.
const ordersTemplate = `version: 1
name: orders
params:
  count: {type: int, min: 1, max: 1000000, default: 40, description: rows to generate}
  rate: {type: int, min: 1, max: 10000, default: 20, description: rows per second}
  region: {type: string, enum: [eu, us], default: eu}
  day: {type: date, min: "2020-01-01"}
  api_token: {type: string, secret: true}
pipeline:
  source:
    type: generate
    config:
      count: ${param.count}
      batch_size: 10
      rate: ${param.rate}
  sink: {type: stdout}
`

func registerConsoleTemplate(t *testing.T, s *server, id, config string, tenants ...string) {
	t.Helper()
	body := map[string]any{"id": id, "config": strings.Replace(config, "name: orders", "name: "+id, 1)}
	if len(tenants) > 0 {
		body["tenants"] = tenants
	}
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	code, resp := s.call(t, "POST", "/v1/templates", "console-admin-1", raw)
	require.Equal(t, http.StatusCreated, code, string(resp))
}

// The console in a real browser against the real binary: an operator starts runs from a
// template form and watches one go pending → running → completed with its log lines
// arriving without a reload, cancels a slow one; a viewer sees no mutation controls and
// is refused a hand-made post; a tenant sees only its runs; a post without the CSRF
// token is refused; signing out ends the session. Every page is photographed.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	dir := t.TempDir()
	// One run at a time, so a second run waits pending behind the first.
	s := startServe(t, filepath.Join(dir, "data"), nil, "--auth-config", consolePrincipals(t, dir),
		"--vault-key", newVaultKey(t), "--max-concurrent-runs", "1", "--shutdown-grace-secs", "0",
		"--lease-ttl-secs", "10") // the last value wins: no lease lapses on a loaded machine
	registerConsoleTemplate(t, s, "orders", ordersTemplate)
	registerConsoleTemplate(t, s, "acme-report", ordersTemplate, "acme")
	code, resp := s.call(t, "POST", "/v1/templates/orders/schedules", "console-admin-1",
		[]byte(`{"cron": "30 2 * * *", "timezone": "Europe/Berlin"}`))
	require.Equal(t, http.StatusCreated, code, string(resp))
	var sched struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal(resp, &sched))

	otto := b.person(t, s.url())
	// Unsigned, every page leads to the sign-in form.
	otto.open("/ui/runs")
	require.True(t, strings.HasPrefix(otto.path(), "/ui/signin"), otto.path())
	otto.shot("signin")
	otto.signIn("console-otto-1", "otto")

	// The run form is generated from the typed params.
	otto.open("/ui/templates")
	otto.shot("templates")
	otto.open("/ui/templates/orders")
	fields := eval[map[string]string](otto, `Object.fromEntries([...document.querySelectorAll("#run-form [name^='param.']")]
		.map(e => [e.name, e.tagName.toLowerCase() + ":" + (e.type || "") + ":" + (e.min || "") + ":" + (e.max || "")]))`)
	require.Equal(t, map[string]string{
		"param.count": "input:number:1:1000000", "param.rate": "input:number:1:10000",
		"param.region": "select:select-one::", "param.day": "input:date:2020-01-01:",
		"param.api_token": "input:password::",
	}, fields)
	otto.shot("template")

	// A second tab keeps the runs list open: it must show new runs and their statuses by
	// itself.
	list := otto.another()
	list.open("/ui/runs")
	eval[bool](list, `window.__sameDocument = true`)

	// A slow run takes the only slot.
	otto.set(`[name="param.count"]`, "1000000")
	otto.set(`[name="param.api_token"]`, "s3cret-Param-Value-1")
	otto.submitAndWait("#start-run")
	slow := runIDFromPath(t, otto.path())
	otto.waitJS(`document.getElementById("run-status")?.textContent === "running"`, "the slow run running")
	require.NotContains(t, otto.text(), "s3cret-Param-Value-1", "a secret param is never shown")

	// A short run waits pending behind it; this tab watches it without reloading.
	otto.open("/ui/templates/orders")
	// 120 rows at 20 a second: running long enough to be seen on a loaded machine.
	otto.set(`[name="param.count"]`, "120")
	otto.set("#labels", "team=sales, tier=gold")
	otto.submitAndWait("#start-run")
	short := runIDFromPath(t, otto.path())
	require.Equal(t, "pending", otto.status())
	eval[bool](otto, `window.__sameDocument = true`)

	// A second tab cancels the slow run and sees it cancelled.
	other := otto.another()
	other.open("/ui/runs/" + slow)
	other.submitAndWait("#cancel")
	other.waitJS(`document.getElementById("run-status")?.textContent === "cancelled"`, "the slow run cancelled")
	require.False(t, eval[bool](other, `!!document.getElementById("cancel")`), "no cancel button on an ended run")

	// The first tab sees the short run go running, then completed, and its log lines.
	seen := []string{"pending"}
	require.Eventually(t, func() bool {
		st := otto.status()
		if st != "" && st != seen[len(seen)-1] {
			seen = append(seen, st)
		}
		return st == "completed"
	}, browserWait, 50*time.Millisecond, "the short run did not complete; seen %v", seen)
	require.True(t, inOrder(seen, "pending", "running", "completed"), "seen %v", seen)
	otto.waitJS(`[...document.querySelectorAll("#log li")].some(li => li.textContent.includes("run completed"))`, "the log's last line")
	logText := eval[string](otto, `document.getElementById("log").innerText`)
	require.Contains(t, logText, "run started")
	require.Contains(t, logText, "run completed")
	require.True(t, eval[bool](otto, `window.__sameDocument === true`), "the page was never reloaded")
	// A loaded machine may hand an attempt back (its lease lapsed); the last one completed.
	attempt := eval[string](otto, `[...document.querySelectorAll("#attempts li")].pop().textContent`)
	require.Regexp(t, `#\d+ on [0-9a-f-]{36}: claimed .* ended .* completed`, attempt)
	list.waitJS(fmt.Sprintf(`document.querySelector('tr[data-run=%q] .status')?.textContent === "completed" &&
		document.querySelector('tr[data-run=%q] .status')?.textContent === "cancelled"`, short, slow), "the list updated itself")
	require.True(t, eval[bool](list, `window.__sameDocument === true`), "the list was never reloaded")
	otto.shot("run")

	// The runs list, filtered and live.
	otto.open("/ui/runs")
	otto.waitJS(fmt.Sprintf(`!!document.querySelector('tr[data-run=%q]')`, short), "the short run listed")
	otto.open("/ui/runs?label=team%3Dsales")
	require.Equal(t, []string{short}, eval[[]string](otto, `[...document.querySelectorAll("tr[data-run]")].map(r => r.dataset.run)`))
	otto.open("/ui/runs?status=cancelled")
	require.Equal(t, []string{slow}, eval[[]string](otto, `[...document.querySelectorAll("tr[data-run]")].map(r => r.dataset.run)`))

	otto.open("/ui/runs?name=" + "bad%20name")
	require.Contains(t, otto.text(), "invalid_body")

	// A post without the CSRF token changes nothing.
	before := len(listRuns(t, s))
	require.Equal(t, http.StatusForbidden, otto.postByHand("/ui/templates/orders/run", false, map[string]string{"param.count": "1"}))
	require.Equal(t, http.StatusForbidden, otto.postByHand("/ui/runs/"+short+"/rollback", false, nil))
	require.Len(t, listRuns(t, s), before)

	// Schedules: next ticks, pause.
	otto.open("/ui/schedules")
	otto.shot("schedules")
	otto.open("/ui/schedules/" + sched.ID)
	require.Equal(t, 5, eval[int](otto, `document.querySelectorAll("#next-ticks li").length`))
	require.Contains(t, otto.text(), "02:30 CET")
	otto.submitAndWait("#toggle-pause")
	require.Equal(t, "paused", eval[string](otto, `document.getElementById("schedule-state").textContent`))
	otto.shot("schedule")
	otto.open("/ui/cluster")
	require.Contains(t, otto.text(), s.addr)
	require.Contains(t, otto.text(), "Term")
	otto.shot("cluster")

	// A viewer: no mutation controls anywhere, and a hand-made post is refused.
	vic := b.person(t, s.url())
	vic.signIn("console-vic-1", "vic")
	vic.open("/ui/runs/" + short)
	vic.waitJS(`!!document.getElementById("run-status")`, "the run page")
	for _, page := range []string{"/ui/runs/" + short, "/ui/runs/" + slow, "/ui/templates/orders", "/ui/schedules/" + sched.ID, "/ui/change-requests"} {
		vic.open(page)
		// The sign-out form is the one form a viewer has.
		require.Equal(t, []string{"/ui/signout"}, eval[[]string](vic, `[...document.querySelectorAll("form[method=post]")].map(f => new URL(f.action).pathname)`), page)
	}
	require.Equal(t, http.StatusForbidden, vic.postByHand("/ui/templates/orders/run", true, map[string]string{"param.count": "1"}))
	require.Equal(t, http.StatusForbidden, vic.postByHand("/ui/schedules/"+sched.ID+"/resume", true, nil))
	require.Len(t, listRuns(t, s), before)
	vic.open("/ui/audit")
	require.Contains(t, vic.text(), "403")

	// A tenant principal runs its tenant's template and sees only its tenant's runs.
	acme := b.person(t, s.url())
	acme.signIn("console-acme-1", "acme-bot")
	acme.open("/ui/templates")
	require.Equal(t, []string{"acme-report"}, eval[[]string](acme, `[...document.querySelectorAll("#templates tbody a")].map(a => a.textContent)`))
	acme.open("/ui/templates/acme-report")
	acme.set(`[name="param.count"]`, "5")
	acme.submitAndWait("#start-run")
	mine := runIDFromPath(t, acme.path())
	acme.waitJS(`document.getElementById("run-status")?.textContent === "completed"`, "the tenant's run completed")
	acme.open("/ui/runs")
	require.Equal(t, []string{mine}, eval[[]string](acme, `[...document.querySelectorAll("tr[data-run]")].map(r => r.dataset.run)`))
	acme.open("/ui/runs/" + short)
	require.Contains(t, acme.text(), "404")
	require.False(t, slices.Contains(eval[[]string](acme, `[...document.querySelectorAll("nav a")].map(a => a.textContent)`), "Cluster"))

	// The admin reads the audit trail.
	root := b.person(t, s.url())
	root.signIn("console-admin-1", "root")
	root.open("/ui/audit")
	require.Contains(t, root.text(), "run.cancel")
	root.shot("audit")
	root.open("/ui/runs")
	root.waitJS(fmt.Sprintf(`!!document.querySelector('tr[data-run=%q]')`, mine), "every tenant's runs listed")
	root.shot("runs")

	// Signing out ends the session.
	otto.open("/ui/runs")
	otto.submitAndWait("#signout")
	require.True(t, strings.HasPrefix(otto.path(), "/ui/signin"), otto.path())
	otto.open("/ui/runs/" + short)
	require.True(t, strings.HasPrefix(otto.path(), "/ui/signin"), "after sign-out the pages ask to sign in: %s", otto.path())
}

// inOrder reports whether want appear in seen in this order (others may come between,
// such as a hand-back's pending).
func inOrder(seen []string, want ...string) bool {
	i := 0
	for _, s := range seen {
		if i < len(want) && s == want[i] {
			i++
		}
	}
	return i == len(want) && seen[len(seen)-1] == want[len(want)-1]
}

// listRuns is every run, read through the API as the admin.
func listRuns(t *testing.T, s *server) []runResource {
	t.Helper()
	code, resp := s.call(t, "GET", "/v1/runs?limit=500", "console-admin-1", nil)
	require.Equal(t, http.StatusOK, code, string(resp))
	var out struct {
		Runs []runResource `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(resp, &out))
	return out.Runs
}

// Under --require-approval run the run form proposes a change request; its proposer is
// refused approving it, and a second operator approves it in the console.
func TestConsoleApprovalInBrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil, "--auth-config", consolePrincipals(t, dir),
		"--require-approval", "run", "--shutdown-grace-secs", "0")
	small := strings.Replace(ordersTemplate, "  api_token: {type: string, secret: true}\n", "", 1)
	registerConsoleTemplate(t, s, "orders", small)

	otto := b.person(t, s.url())
	otto.signIn("console-otto-1", "otto")
	otto.open("/ui/templates/orders")
	otto.set(`[name="param.count"]`, "10")
	otto.submitAndWait("#start-run")
	require.True(t, strings.HasPrefix(otto.path(), "/ui/change-requests"), otto.path())
	require.Contains(t, otto.text(), "Proposed as a change request")
	cr := eval[string](otto, `document.querySelector("tr[data-cr]").dataset.cr`)
	otto.submitAndWait(fmt.Sprintf(`tr[data-cr=%q] button.approve`, cr))
	require.Contains(t, otto.text(), "403")
	require.Contains(t, otto.text(), "another operator or admin must decide it")
	require.Empty(t, listRuns(t, s), "the proposer's approval created nothing")

	// The second operator uses the keyboard only: the token typed and Enter, then the
	// approve button focused and Enter.
	vera := b.person(t, s.url())
	vera.open("/ui/signin")
	eval[bool](vera, `window.__before = true`)
	vera.do(chromedp.SendKeys(chromedp.ID("token"), "console-vera-1\n"))
	vera.waitJS(`window.__before !== true && document.getElementById("whoami")?.textContent.startsWith("vera")`, "signed in by keyboard")
	vera.open("/ui/change-requests?status=proposed")
	vera.shot("change-requests")
	eval[bool](vera, `window.__before = true`)
	vera.do(chromedp.Focus(chromedp.CSS(fmt.Sprintf(`tr[data-cr=%q] button.approve`, cr))), chromedp.KeyEvent(kb.Enter))
	vera.waitJS(`window.__before !== true && document.readyState === "complete"`, "the page after approving")
	require.Contains(t, vera.text(), "Change request approved")
	require.Equal(t, "approved", eval[string](vera, fmt.Sprintf(`document.querySelector('tr[data-cr=%q] .status').textContent`, cr)))
	vera.click(fmt.Sprintf(`tr[data-cr=%q] a`, cr))
	vera.waitJS(`document.getElementById("run-status")?.textContent === "completed"`, "the approved run completed")
	runs := listRuns(t, s)
	require.Len(t, runs, 1)
	require.Equal(t, "completed", runs[0].Status)

	// A second proposal, rejected: nothing runs.
	otto.open("/ui/templates/orders")
	otto.submitAndWait("#start-run")
	second := eval[string](otto, `document.querySelector("tr[data-cr]").dataset.cr`)
	require.NotEqual(t, cr, second)
	vera.open("/ui/change-requests?status=proposed")
	vera.submitAndWait(fmt.Sprintf(`tr[data-cr=%q] button.reject`, second))
	require.Contains(t, vera.text(), "Change request rejected")
	require.Equal(t, "rejected", eval[string](vera, fmt.Sprintf(`document.querySelector('tr[data-cr=%q] .status').textContent`, second)))
	require.Len(t, listRuns(t, s), 1)
}
