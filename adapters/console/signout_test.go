package console_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/console"
	"github.com/sluicehq/sluice/tests/historytest"
)

// signedOut reports whether the console h sends the cookie to sign in.
func signedOut(t *testing.T, h http.Handler, ck *http.Cookie) bool {
	t.Helper()
	c := &client{t: t, h: h, cookie: ck}
	rec := c.do("GET", "/ui/runs", nil, nil)
	if rec.Code == http.StatusOK {
		return false
	}
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.True(t, strings.HasPrefix(rec.Header().Get("Location"), "/ui/signin"), rec.Header().Get("Location"))
	return true
}

// Two members of one cluster (same session key, one history) accept each other's
// cookies; a sign-out on one is refused by the other at once, and by a member started
// afterwards (a restart). A process-local memory of sign-outs fails the second and third
// checks.
func TestSignOutHoldsOnEveryMemberAndAfterARestart(t *testing.T) {
	t.Parallel()
	history := historytest.Open(t)
	clk := &clock{now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	a := &client{t: t, h: newConsole(&fakeRuns{}, clk, history)}
	b := newConsole(&fakeRuns{}, clk, history)

	ck := a.signIn("op-token")
	other := (&client{t: t, h: a.h}).signIn("op-token")
	require.False(t, signedOut(t, b, ck), "b accepts a's cookie")

	rec := a.do("POST", "/ui/signout", url.Values{"csrf": {a.csrf("/ui/runs")}}, nil)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	require.True(t, signedOut(t, a.h, ck), "a refuses the signed-out cookie")
	require.True(t, signedOut(t, b, ck), "b refuses the cookie signed out on a")
	restarted := newConsole(&fakeRuns{}, clk, history)
	require.True(t, signedOut(t, restarted, ck), "a member started later refuses it")
	require.False(t, signedOut(t, b, other), "another session of the same person lives on")
}

// When whether a session was signed out cannot be read, the session is refused (a
// signed-out cookie must never pass), and a sign-out that cannot be recorded says so
// instead of pretending it worked.
func TestSessionsAreRefusedWhenSignOutsCannotBeRead(t *testing.T) {
	t.Parallel()
	history := historytest.Open(t)
	clk := &clock{now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	c := &client{t: t, h: newConsole(&fakeRuns{}, clk, history)}
	c.signIn("op-token")
	csrf := c.csrf("/ui/runs")
	require.NoError(t, history.Close())

	require.True(t, signedOut(t, c.h, c.cookie))
	rec := c.do("POST", "/ui/signout", url.Values{"csrf": {csrf}}, nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code, "the session is refused before the sign-out is tried")

	// The history reads but refuses the write.
	w := &client{t: t, h: newConsole(&fakeRuns{}, clk, unwritable{historytest.Open(t)})}
	w.signIn("op-token")
	rec = w.do("POST", "/ui/signout", url.Values{"csrf": {w.csrf("/ui/runs")}}, nil)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Contains(t, rec.Body.String(), "could not be recorded")
	cleared := rec.Result().Cookies()
	require.Len(t, cleared, 1)
	require.Negative(t, cleared[0].MaxAge, "the browser still drops its cookie")
}

// unwritable is a history whose sign-out writes fail.
type unwritable struct{ console.Signouts }

func (unwritable) RevokeSession(context.Context, string, time.Time, time.Time) error {
	return errors.New("history unreachable")
}

// A log stream opened with a session ends when that session is signed out, on whichever
// member the sign-out happened, instead of following the run for as long as it runs.
func TestALogStreamEndsWithItsSession(t *testing.T) {
	t.Parallel()
	history := historytest.Open(t)
	clk := &clock{now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	a := &client{t: t, h: newConsole(&fakeRuns{}, clk, history)}
	f := &fakeRuns{endless: true}
	b := httptest.NewServer(newConsole(f, clk, history))
	defer b.Close()
	ck := a.signIn("viewer-token")

	req, err := http.NewRequest(http.MethodGet, b.URL+"/ui/runs/"+theRun.ID+"/logs", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.AddCookie(ck)
	resp, err := b.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body := make(chan string, 1)
	go func() {
		raw, _ := io.ReadAll(resp.Body) // until the server ends the stream
		body <- string(raw)
	}()

	rec := a.do("POST", "/ui/signout", url.Values{"csrf": {a.csrf("/ui/runs")}}, nil)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	select {
	case got := <-body:
		require.Contains(t, got, "event: failure\ndata: {\"code\":\"unauthenticated\"")
	case <-time.After(time.Minute):
		t.Fatal("the log stream outlived its session")
	}
}

// stalled is a history that never answers whether a session was signed out.
type stalled struct{ console.Signouts }

func (stalled) SessionRevoked(ctx context.Context, _ string) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}

// A history that does not answer refuses the session after Config.QueryTimeout instead
// of holding the request for as long as the history hangs.
func TestAStalledHistoryRefusesTheSession(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	h, err := console.New(console.Config{SessionKey: testKey, Now: clk.Now, QueryTimeout: 20 * time.Millisecond},
		console.Deps{Tokens: tokenTable(tokens), Signouts: stalled{historytest.Open(t)}, Runs: &fakeRuns{}, Explain: explain})
	require.NoError(t, err)
	c := &client{t: t, h: h}
	c.signIn("viewer-token")
	require.True(t, signedOut(t, h, c.cookie))
}
