package bootstrap_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// noRedirect reads the first answer instead of following it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func consoleAnswer(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := noRedirect.Get(url)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp
}

func TestServeMountsTheConsoleUnlessUIIsOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil, "--history", "memory", "--auth-token", "console-token-1")
	resp := consoleAnswer(t, "http://"+s.addr+"/")
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "/ui/", resp.Header.Get("Location"))
	resp = consoleAnswer(t, "http://"+s.addr+"/ui/signin")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'")
	require.Regexp(t, `^[0-9a-f]{32}$`, resp.Header.Get("X-Request-Id"), "console requests get ids like the API's")
	code, _ := s.do(t, "GET", "/v1/runs", "console-token-1", "")
	require.Equal(t, http.StatusOK, code, "the API is still served beside it")
	metrics, err := http.Get("http://" + s.addr + "/metrics")
	require.NoError(t, err)
	text, err := io.ReadAll(metrics.Body)
	require.NoError(t, err)
	require.NoError(t, metrics.Body.Close())
	require.Contains(t, string(text), `sluice_serve_requests_total{method="GET",route="/ui/signin",status="200"} 1`,
		"console requests count beside the API's")
	require.Equal(t, 0, s.stop())

	off := startServer(t, nil, "--history", "memory", "--auth-token", "console-token-1", "--ui=false")
	for _, path := range []string{"/", "/ui/", "/ui/signin", "/ui/static/console.js"} {
		require.Equal(t, http.StatusNotFound, consoleAnswer(t, "http://"+off.addr+path).StatusCode, path)
	}
	require.Equal(t, 0, off.stop())
}

// consoleSession signs in to the console of the server at addr and returns the cookie.
func consoleSession(t *testing.T, addr, token string) *http.Cookie {
	t.Helper()
	resp, err := noRedirect.PostForm("http://"+addr+"/ui/signin", url.Values{"token": {token}})
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Len(t, resp.Cookies(), 1)
	return resp.Cookies()[0]
}

// consolePage answers GET path with the cookie: 200 for a session, 303 to sign in without.
func consolePage(t *testing.T, addr, path string, ck *http.Cookie) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	require.NoError(t, err)
	req.AddCookie(ck)
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode
}

// Sessions are signed with a key derived from the server's tokens: a restart with the
// same tokens keeps them, a changed token ends them all.
func TestConsoleSessionsLastAsLongAsTheTokens(t *testing.T) {
	t.Parallel()
	hist := "sqlite:" + filepath.Join(t.TempDir(), "h.db")
	s := startServer(t, nil, "--history", hist, "--auth-token", "first-token-1")
	ck := consoleSession(t, s.addr, "first-token-1")
	require.Equal(t, http.StatusOK, consolePage(t, s.addr, "/ui/runs", ck))
	require.Equal(t, 0, s.stop())

	s = startServer(t, nil, "--history", hist, "--auth-token", "first-token-1")
	require.Equal(t, http.StatusOK, consolePage(t, s.addr, "/ui/runs", ck), "a restart keeps the session")
	require.Equal(t, 0, s.stop())

	s = startServer(t, nil, "--history", hist, "--auth-token", "second-token-2")
	require.Equal(t, http.StatusSeeOther, consolePage(t, s.addr, "/ui/runs", ck), "a new token ends the session")
	require.Equal(t, 0, s.stop())
}

// With --no-auth every caller of the API is the anonymous admin; the console says so
// and lets any token in as that principal.
func TestConsoleWithoutAuthSignsInAsTheAnonymousAdmin(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil, "--history", "memory", "--no-auth")
	resp, err := http.Get("http://" + s.addr + "/ui/signin")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Contains(t, string(body), "--no-auth")
	ck := consoleSession(t, s.addr, "anything")
	require.Equal(t, http.StatusOK, consolePage(t, s.addr, "/ui/audit", ck), "the anonymous principal is admin")
	require.Equal(t, 0, s.stop())
}

// A lowered role ends the sessions signed in under the old one, token unchanged.
func TestConsoleSessionsEndWhenARoleChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hist := "sqlite:" + filepath.Join(dir, "h.db")
	auth := filepath.Join(dir, "auth.yaml")
	write := func(role string) {
		require.NoError(t, os.WriteFile(auth, []byte("- {name: ann, token: ann-token-1, role: "+role+"}\n"), 0o600))
	}
	write("admin")
	s := startServer(t, nil, "--history", hist, "--auth-config", auth)
	ck := consoleSession(t, s.addr, "ann-token-1")
	require.Equal(t, http.StatusOK, consolePage(t, s.addr, "/ui/audit", ck))
	require.Equal(t, 0, s.stop())

	write("viewer")
	s = startServer(t, nil, "--history", hist, "--auth-config", auth)
	require.Equal(t, http.StatusSeeOther, consolePage(t, s.addr, "/ui/audit", ck), "the admin session ended with the role")
	require.Equal(t, http.StatusForbidden, consolePage(t, s.addr, "/ui/audit", consoleSession(t, s.addr, "ann-token-1")))
	require.Equal(t, 0, s.stop())
}
