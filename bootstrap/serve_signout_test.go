package bootstrap_test

import (
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/testdb"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// consoleSignOut signs the session of ck out through the console at addr, with the CSRF
// token its runs page carries.
func consoleSignOut(t *testing.T, addr string, ck *http.Cookie) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/ui/runs", nil)
	require.NoError(t, err)
	req.AddCookie(ck)
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	m := csrfField.FindSubmatch(body)
	require.NotNil(t, m, "no CSRF token on the runs page: %d %s", resp.StatusCode, body)

	req, err = http.NewRequest(http.MethodPost, "http://"+addr+"/ui/signout",
		strings.NewReader(url.Values{"csrf": {string(m[1])}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(ck)
	resp, err = noRedirect.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/ui/signin", resp.Header.Get("Location"))
}

// A console sign-out holds cluster-wide (SPEC §14.8): two members on one PostgreSQL
// history accept each other's cookies, and a cookie signed out on member A is refused by
// member B at once — it was remembered only by A before.
func TestConsoleSignOutHoldsOnEveryMember(t *testing.T) {
	t.Parallel()
	history := testdb.Postgres(t)
	common := []string{"--history", history, "--auth-token", "cluster-token-1", "--cluster-poll-secs", "1"}
	a := startClusterServer(t, append(common, "--data-dir", t.TempDir())...)
	b := startClusterServer(t, append(common, "--data-dir", t.TempDir())...)

	ck := consoleSession(t, a.addr, "cluster-token-1")
	require.Equal(t, http.StatusOK, consolePage(t, b.addr, "/ui/runs", ck), "b accepts a session started on a")
	kept := consoleSession(t, b.addr, "cluster-token-1")

	consoleSignOut(t, a.addr, ck)
	require.Equal(t, http.StatusSeeOther, consolePage(t, a.addr, "/ui/runs", ck))
	require.Equal(t, http.StatusSeeOther, consolePage(t, b.addr, "/ui/runs", ck), "b refuses the cookie signed out on a")
	require.Equal(t, http.StatusOK, consolePage(t, a.addr, "/ui/runs", kept), "only the signed-out session ended")
	require.Equal(t, 0, b.stop(), b.stderr.String())
	require.Equal(t, 0, a.stop(), a.stderr.String())
}

// A sign-out outlives a restart of the server (it was kept in memory before).
func TestConsoleSignOutSurvivesARestart(t *testing.T) {
	t.Parallel()
	hist := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	s := startServer(t, nil, "--history", hist, "--auth-token", "restart-token-1")
	ck := consoleSession(t, s.addr, "restart-token-1")
	consoleSignOut(t, s.addr, ck)
	require.Equal(t, http.StatusSeeOther, consolePage(t, s.addr, "/ui/runs", ck))
	require.Equal(t, 0, s.stop())

	s = startServer(t, nil, "--history", hist, "--auth-token", "restart-token-1")
	require.Equal(t, http.StatusSeeOther, consolePage(t, s.addr, "/ui/runs", ck), "the restarted server refuses it")
	require.Equal(t, http.StatusOK, consolePage(t, s.addr, "/ui/runs", consoleSession(t, s.addr, "restart-token-1")))
	require.Equal(t, 0, s.stop())
}
