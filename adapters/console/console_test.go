package console_test

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/console"
	"github.com/sluicehq/sluice/tests/historytest"
)

type client struct {
	t      *testing.T
	h      http.Handler
	cookie *http.Cookie
}

func (c *client) do(method, target string, form url.Values, header map[string]string) *httptest.ResponseRecorder {
	c.t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(method, target, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if c.cookie != nil {
		req.AddCookie(c.cookie)
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, req)
	return rec
}

// signIn signs in with token and keeps the session cookie.
func (c *client) signIn(token string) *http.Cookie {
	c.t.Helper()
	rec := c.do("POST", "/ui/signin", url.Values{"token": {token}, "next": {"/ui/runs"}}, nil)
	require.Equal(c.t, http.StatusSeeOther, rec.Code, rec.Body.String())
	cookies := rec.Result().Cookies()
	require.Len(c.t, cookies, 1)
	c.cookie = cookies[0]
	return c.cookie
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token of a page the client may see.
func (c *client) csrf(page string) string {
	c.t.Helper()
	rec := c.do("GET", page, nil, nil)
	require.Equal(c.t, http.StatusOK, rec.Code, rec.Body.String())
	m := csrfRE.FindStringSubmatch(rec.Body.String())
	require.NotNil(c.t, m, "no CSRF token on %s", page)
	return m[1]
}

func setup(t *testing.T) (*client, *fakeRuns, *clock) {
	f := &fakeRuns{}
	clk := &clock{now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	return &client{t: t, h: newConsole(f, clk, historytest.Open(t))}, f, clk
}

func TestSignInSetsAHardenedCookieWithoutTheToken(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	ck := c.signIn("op-token")
	require.Equal(t, console.CookieName, ck.Name)
	require.True(t, ck.HttpOnly, "HttpOnly")
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	require.Equal(t, "/ui/", ck.Path)
	require.Equal(t, int((12 * time.Hour).Seconds()), ck.MaxAge)
	require.NotContains(t, ck.Value, "op-token")
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		require.NotContains(t, ck.Value, enc.EncodeToString([]byte("op-token")))
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(ck.Value, ".")[0])
	require.NoError(t, err)
	require.NotContains(t, string(raw), "op-token")

	// A wrong token gets no session.
	bad := &client{t: t, h: c.h}
	rec := bad.do("POST", "/ui/signin", url.Values{"token": {"nope"}}, nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Empty(t, rec.Result().Cookies())
	require.NotContains(t, rec.Body.String(), "nope")
}

func TestEveryAnswerCarriesTheCSP(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	anon := &client{t: t, h: c.h}
	for _, path := range []string{"/ui/signin", "/ui/static/console.js", "/ui/runs", "/ui/nowhere"} {
		rec := anon.do("GET", path, nil, nil)
		require.Equal(t, console.CSP, rec.Header().Get("Content-Security-Policy"), path)
		require.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'self'")
		require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	}
	for path, kind := range map[string]string{"/ui/static/console.js": "javascript", "/ui/static/console.css": "text/css"} {
		rec := anon.do("GET", path, nil, nil)
		require.Equal(t, http.StatusOK, rec.Code, path)
		require.Contains(t, rec.Header().Get("Content-Type"), kind, path)
	}
	c.signIn("viewer-token")
	for _, path := range []string{"/ui/runs", "/ui/runs/" + theRun.ID, "/ui/runs?partial=1"} {
		rec := c.do("GET", path, nil, nil)
		require.Equal(t, http.StatusOK, rec.Code, path)
		require.Equal(t, console.CSP, rec.Header().Get("Content-Security-Policy"), path)
		// No inline script or style: the CSP would block them, so the page would break.
		require.NotRegexp(t, `<script>|<script [^>]*>[^<]|style="|<style`, rec.Body.String(), path)
	}
}

func TestAMutationNeedsTheSessionsCSRFToken(t *testing.T) {
	t.Parallel()
	c, f, _ := setup(t)
	c.signIn("op-token")
	page := "/ui/runs/" + theRun.ID
	token := c.csrf(page)
	cancel := page + "/cancel"

	// No token, an empty one, a forged one, and one of another session.
	other := &client{t: t, h: c.h}
	other.signIn("admin-token")
	for name, form := range map[string]url.Values{
		"none":          {},
		"empty":         {"csrf": {""}},
		"forged":        {"csrf": {base64.RawURLEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))}},
		"other session": {"csrf": {other.csrf(page)}},
	} {
		rec := c.do("POST", cancel, form, nil)
		require.Equal(t, http.StatusForbidden, rec.Code, name)
		require.Contains(t, rec.Body.String(), "CSRF", name)
	}
	calls, _ := f.state()
	require.Zero(t, calls, "a refused form never reaches the use-case")

	// A post from another site is refused even with the token.
	rec := c.do("POST", cancel, url.Values{"csrf": {token}}, map[string]string{"Origin": "https://evil.example"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	rec = c.do("POST", cancel, url.Values{"csrf": {token}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	calls, _ = f.state()
	require.Zero(t, calls)

	rec = c.do("POST", cancel, url.Values{"csrf": {token}}, map[string]string{"Origin": "http://example.com"})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	_, who := f.state()
	require.Equal(t, []string{"otto"}, who, "the use-case is called as the signed-in principal")
}

func TestAViewerSeesNoControlsAndAForgedPostIsRefused(t *testing.T) {
	t.Parallel()
	c, f, _ := setup(t)
	c.signIn("viewer-token")
	page := "/ui/runs/" + theRun.ID
	body := c.do("GET", page, nil, nil).Body.String()
	require.NotContains(t, body, "/cancel")
	require.NotContains(t, body, "rollback")
	require.NotContains(t, body, `id="config"`, "configs are for operators")
	require.NotContains(t, c.do("GET", "/ui/runs", nil, nil).Body.String(), "/ui/audit")

	rec := c.do("POST", page+"/cancel", url.Values{"csrf": {c.csrf(page)}}, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	calls, who := f.state()
	require.Equal(t, 1, calls, "the use-case decided")
	require.Empty(t, who)
	require.Equal(t, http.StatusForbidden, c.do("GET", "/ui/audit", nil, nil).Code)

	op := &client{t: t, h: c.h}
	op.signIn("op-token")
	require.Contains(t, op.do("GET", page, nil, nil).Body.String(), `id="cancel"`)
}

func TestSignOutEndsTheSession(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	old := c.signIn("op-token")
	rec := c.do("POST", "/ui/signout", url.Values{"csrf": {c.csrf("/ui/runs")}}, nil)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	cleared := rec.Result().Cookies()
	require.Len(t, cleared, 1)
	require.Negative(t, cleared[0].MaxAge)

	// The old cookie, replayed, is no session any more.
	c.cookie = old
	rec = c.do("GET", "/ui/runs", nil, nil)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.True(t, strings.HasPrefix(rec.Header().Get("Location"), "/ui/signin"), rec.Header().Get("Location"))
	require.Equal(t, http.StatusUnauthorized, c.do("GET", "/ui/runs?partial=1", nil, nil).Code)
}

func TestATamperedOrExpiredCookieIsNoSession(t *testing.T) {
	t.Parallel()
	c, _, clk := setup(t)
	ck := c.signIn("viewer-token")
	payload, sig, _ := strings.Cut(ck.Value, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	require.NoError(t, err)
	promoted := strings.Replace(string(raw), `"r":"viewer"`, `"r":"admin"`, 1)
	require.NotEqual(t, string(raw), promoted)
	c.cookie = &http.Cookie{Name: ck.Name, Value: base64.RawURLEncoding.EncodeToString([]byte(promoted)) + "." + sig}
	require.Equal(t, http.StatusSeeOther, c.do("GET", "/ui/audit", nil, nil).Code)

	c.cookie = ck
	require.Equal(t, http.StatusOK, c.do("GET", "/ui/runs", nil, nil).Code)
	clk.advance(12*time.Hour + time.Second)
	require.Equal(t, http.StatusSeeOther, c.do("GET", "/ui/runs", nil, nil).Code, "past 12 h the session is over")
}

func TestSignInRedirectStaysInTheConsole(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	for next, want := range map[string]string{
		"/ui/templates":        "/ui/templates",
		"https://evil.example": "/ui/runs",
		"//evil.example/ui/":   "/ui/runs",
		"/v1/runs":             "/ui/runs",
	} {
		rec := c.do("POST", "/ui/signin", url.Values{"token": {"op-token"}, "next": {next}}, nil)
		require.Equal(t, want, rec.Header().Get("Location"), next)
	}
}

// regexpFind returns the first group of pattern in body; marker must be present.
func regexpFind(t *testing.T, body, marker, pattern string) string {
	t.Helper()
	require.Contains(t, body, marker)
	m := regexp.MustCompile(pattern).FindStringSubmatch(body)
	require.NotNil(t, m, pattern)
	return m[1]
}

func TestRunValuesAreEscaped(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	c.signIn("viewer-token")
	for _, path := range []string{"/ui/runs", "/ui/runs/" + hostileRun.ID} {
		body := c.do("GET", path, nil, nil).Body.String()
		require.NotContains(t, body, "<img", path)
		require.Contains(t, body, "&lt;img src=x onerror=alert(1)&gt;", path)
	}
}
