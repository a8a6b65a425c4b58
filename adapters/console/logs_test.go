package console_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/console"
	"github.com/sluicehq/sluice/tests/historytest"
)

func TestTheLogStreamIsServerSentEvents(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	c.signIn("viewer-token")
	rec := c.do("GET", "/ui/runs/"+theRun.ID+"/logs", nil, map[string]string{"Accept": "text/event-stream"})
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
	require.Contains(t, rec.Body.String(), "event: end\ndata: {\"status\":\"running\"}")

	// Without a session the stream is refused, not redirected (EventSource cannot follow
	// a sign-in page).
	anon := &client{t: t, h: c.h}
	rec = anon.do("GET", "/ui/runs/"+theRun.ID+"/logs", nil, map[string]string{"Accept": "text/event-stream"})
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

func TestEveryRequestIsLoggedByRouteWithItsPrincipal(t *testing.T) {
	t.Parallel()
	// httptest serves on the test's goroutine, so the log is written by this one alone.
	var out bytes.Buffer
	clk := &clock{now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	h, err := console.New(console.Config{SessionKey: testKey, Now: clk.Now},
		console.Deps{Tokens: tokenTable(tokens), Signouts: historytest.Open(t), Runs: &fakeRuns{}, Explain: explain,
			Log: slog.New(slog.NewJSONHandler(&out, nil))})
	require.NoError(t, err)
	c := &client{t: t, h: h}
	c.signIn("op-token")
	require.Equal(t, http.StatusOK, c.do("GET", "/ui/runs/"+theRun.ID, nil, nil).Code)
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	require.Len(t, lines, 2)
	require.Equal(t, "POST /ui/signin", lines[0]["route"])
	require.Equal(t, "otto", lines[0]["principal"])
	require.EqualValues(t, http.StatusSeeOther, lines[0]["status"])
	require.Equal(t, "GET /ui/runs/{id}", lines[1]["route"], "the pattern, never the run id")
	require.Equal(t, "otto", lines[1]["principal"])
	require.EqualValues(t, http.StatusOK, lines[1]["status"])
	require.NotContains(t, out.String(), "op-token")
}

// An error page names the request id the server gave the request (SPEC §14.6: every error
// body carries it), so the log lines behind it can be found; so does a live fragment's.
func TestErrorPagesNameTheRequestID(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	inner := c.h
	c.h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-4711")
		inner.ServeHTTP(w, r)
	})
	c.signIn("viewer-token")
	rec := c.do("GET", "/ui/no-such-page", nil, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Contains(t, rec.Body.String(), `<code id="request-id">req-4711</code>`)
	rec = c.do("GET", "/ui/runs/01900000-0000-7000-8000-00000000dead?partial=1", nil, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "request id req-4711")
}

// observed records what RequestMetrics was told.
type observed struct {
	mu   sync.Mutex
	seen []string
}

func (o *observed) Observe(method, route string, status int, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, fmt.Sprintf("%s %s %d", method, route, status))
}

// Console requests count in the request metrics beside the API's (SPEC §10), labelled by
// route pattern; an unmatched path, or an odd method on it, never becomes a label.
func TestConsoleRequestsAreCounted(t *testing.T) {
	t.Parallel()
	o := &observed{}
	clk := &clock{now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	h, err := console.New(console.Config{SessionKey: testKey, Now: clk.Now},
		console.Deps{Tokens: tokenTable(tokens), Signouts: historytest.Open(t), Runs: &fakeRuns{}, Explain: explain,
			RequestMetrics: o})
	require.NoError(t, err)
	c := &client{t: t, h: h}
	c.signIn("viewer-token")
	c.do("GET", "/ui/runs/"+theRun.ID, nil, nil)
	c.do("GET", "/ui/secret-path-1", nil, nil)
	c.do("BREW", "/ui/secret-path-2", nil, nil)
	o.mu.Lock()
	defer o.mu.Unlock()
	require.Equal(t, []string{"POST /ui/signin 303", "GET /ui/runs/{id} 200", "GET unmatched 404", "other unmatched 404"}, o.seen)
}
