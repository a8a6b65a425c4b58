package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now := created.Add(time.Minute)
	refused := fmt.Errorf("169.254.169.254 is a link-local address: %w", cluster.ErrUndeliverable)
	cases := []struct {
		name     string
		status   int
		err      error
		attempts int
		now      time.Time
		want     cluster.Verdict
		wait     time.Duration // for Retry: Next - now
	}{
		{name: "200", status: 200, want: cluster.Delivered},
		{name: "204", status: 204, want: cluster.Delivered},
		{name: "299", status: 299, want: cluster.Delivered},
		{name: "400 is final", status: 400, want: cluster.Rejected},
		{name: "404 is final", status: 404, want: cluster.Rejected},
		{name: "410 is final", status: 410, want: cluster.Rejected},
		{name: "408 retries", status: 408, want: cluster.Retry, wait: time.Second},
		{name: "429 retries", status: 429, want: cluster.Retry, wait: time.Second},
		{name: "500 retries", status: 500, want: cluster.Retry, wait: time.Second},
		{name: "503 second attempt doubles", status: 503, attempts: 1, want: cluster.Retry, wait: 2 * time.Second},
		{name: "third attempt", status: 502, attempts: 2, want: cluster.Retry, wait: 4 * time.Second},
		{name: "3xx retries", status: 302, want: cluster.Retry, wait: time.Second},
		{name: "network error retries", err: errors.New("connection reset"), want: cluster.Retry, wait: time.Second},
		{name: "timeout retries", err: context.DeadlineExceeded, attempts: 3, want: cluster.Retry, wait: 8 * time.Second},
		{name: "backoff caps at 5 min", status: 500, attempts: 9, want: cluster.Retry, wait: 5 * time.Minute},
		{name: "cap holds for many attempts", status: 500, attempts: 500, want: cluster.Retry, wait: 5 * time.Minute},
		{name: "refused address is final", err: refused, want: cluster.Rejected},
		{name: "error wins over a 2xx status", status: 200, err: errors.New("body read failed"), want: cluster.Retry,
			wait: time.Second},
		{name: "last retry lands on the 24 h mark", status: 500, attempts: 20,
			now: created.Add(24*time.Hour - time.Minute), want: cluster.Retry, wait: time.Minute},
		{name: "expires after 24 h", status: 500, attempts: 300, now: created.Add(24 * time.Hour),
			want: cluster.Expired},
		{name: "delivered even late", status: 200, now: created.Add(48 * time.Hour), want: cluster.Delivered},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			at := now
			if !tc.now.IsZero() {
				at = tc.now
			}
			d := cluster.Decide(tc.status, tc.err, tc.attempts, created, at)
			require.Equal(t, tc.want, d.Verdict, d.Verdict.String())
			if tc.want == cluster.Retry {
				require.Equal(t, tc.wait, d.Next.Sub(at))
			} else {
				require.True(t, d.Next.IsZero())
			}
		})
	}
}

// outboxRow is a callback row of the real history as the tests read it back.
type outboxRow struct {
	ID        int64   `bun:"id"`
	Attempts  int     `bun:"attempts"`
	NextAt    int64   `bun:"next_at"`
	LastError *string `bun:"last_error"`
}

// addOutbox writes a due callback row for item (its ID is ignored) the way a finishing
// run does, and returns the row's id.
func addOutbox(t *testing.T, h *history, item cluster.OutboxItem) int64 {
	t.Helper()
	var id int64
	require.NoError(t, h.DB().NewRaw(`INSERT INTO sluice_outbox (run_id, url, payload, attempts, next_at, created_at)
  VALUES (?, ?, ?, 0, 0, ?) RETURNING id`, item.RunID, item.URL, string(item.Payload), item.CreatedAt.UnixMilli()).
		Scan(context.Background(), &id))
	return id
}

// outboxRows reads every callback row left, by id.
func outboxRows(t *testing.T, h *history) map[int64]outboxRow {
	t.Helper()
	var rows []outboxRow
	require.NoError(t, h.DB().NewRaw("SELECT id, attempts, next_at, last_error FROM sluice_outbox").Scan(context.Background(), &rows))
	out := map[int64]outboxRow{}
	for _, r := range rows {
		out[r.ID] = r
	}
	return out
}

// awaitOutbox waits until every row of ids was delivered (deleted) or has a failed attempt.
func awaitOutbox(t *testing.T, h *history, ids ...int64) map[int64]outboxRow {
	t.Helper()
	var rows map[int64]outboxRow
	h.until(t, func() bool {
		rows = outboxRows(t, h)
		for _, id := range ids {
			if r, ok := rows[id]; ok && r.Attempts == 0 {
				return false
			}
		}
		return true
	}, "every callback delivered or retried")
	return rows
}

type fakeDeliverer struct {
	answers map[string]func() (int, error)
}

func (d fakeDeliverer) Deliver(ctx context.Context, delivery, u string, body []byte) (int, error) {
	if _, ok := ctx.Deadline(); !ok || len(body) == 0 || delivery == "" {
		return 0, errors.New("no deadline, empty body or no delivery id")
	}
	return d.answers[u]()
}

func TestOutboxSenderDeliversRejectsAndRetries(t *testing.T) {
	t.Parallel()
	h := newHistory(t)
	var clock *fakeClock
	body := []byte(`{"run_id":"r1"}`)
	add := func(u string) int64 {
		return addOutbox(t, h, cluster.OutboxItem{RunID: "r1", URL: u, Payload: body,
			CreatedAt: time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC)})
	}
	ok, gone, flaky, creds := add("http://ok"), add("http://gone"), add("http://flaky"), add("http://creds")
	dl := fakeDeliverer{answers: map[string]func() (int, error){
		"http://ok":    func() (int, error) { return 200, nil },
		"http://gone":  func() (int, error) { return 404, nil },
		"http://flaky": func() (int, error) { return 503, nil },
		"http://creds": func() (int, error) {
			return 0, &url.Error{Op: "Post", URL: "http://user:pw@hook.example/x?sig=1", Err: errors.New("refused")}
		},
	}}
	start(t, h, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
		d.Outbox, d.Deliverer = h, dl
		c.OutboxInterval = 10 * time.Millisecond
		clock = d.Clock.(*fakeClock)
	})
	rows := awaitOutbox(t, h, ok, gone, flaky, creds)
	require.NotContains(t, rows, ok, "2xx is delivered")
	require.NotContains(t, rows, gone, "404 is final and dropped")
	require.Contains(t, rows, flaky, "503 is kept to be tried again")
	require.Contains(t, rows, creds, "a refused connection is kept to be tried again")
	h.mu.Lock()
	defer h.mu.Unlock()
	// The fake clock lags the history's, so a retried row is due again at once: the first
	// retry of each is read from what the member asked, the rows only prove it was stored.
	require.Equal(t, clock.Now().Add(time.Second), h.retries[flaky].next, "retried a second later")
	require.Equal(t, "HTTP 503", h.retries[flaky].lastErr)
	require.Contains(t, h.retries[creds].lastErr, "hook.example")
	require.NotContains(t, h.retries[creds].lastErr, "pw")
	require.NotContains(t, h.retries[creds].lastErr, "sig=")
	require.NotContains(t, *rows[creds].LastError, "pw", "nor in the stored row")
}

func TestPurgeLoopUsesTheRetentions(t *testing.T) {
	t.Parallel()
	hist := newHistory(t)
	h := start(t, hist, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
		d.Purger = hist
		c.RetainTerminal = 48 * time.Hour
		c.PurgeInterval = 20 * time.Millisecond
	})
	var first runs.PurgeRequest
	hist.until(t, func() bool {
		hist.mu.Lock()
		defer hist.mu.Unlock()
		if len(hist.purges) > 0 {
			first = hist.purges[0]
		}
		return len(hist.purges) >= 2
	}, "purges at start and then every interval")
	now := h.clock.Now()
	require.Equal(t, now.Add(-48*time.Hour), first.RunsBefore)
	require.Equal(t, now.Add(-cluster.DefaultIdempotencyRetention), first.IdempotencyBefore)
	require.Equal(t, now.Add(-cluster.DefaultRetainAudit), first.AuditBefore, "audit entries are kept a year by default")
	require.Equal(t, now, first.SignoutsBefore, "console sign-outs go when their cookies expired")
}

// A sealed outbox row (SPEC §14.1) is opened by the member that delivers it: the
// deliverer gets the real URL and payload; a member without the key retries it.
func TestSealedOutboxRowsAreOpenedAtDelivery(t *testing.T) {
	t.Parallel()
	sealed := func(s runs.Sealer) cluster.OutboxItem {
		url, payload, ok := runs.CallbackBuilderFor(s)(runs.CallbackInput{RunID: "r1", Status: "completed",
			Callback: &runs.Callback{URL: "http://ok"}})
		require.True(t, ok)
		require.Equal(t, runs.SealedOutboxURL, url)
		return cluster.OutboxItem{ID: 1, RunID: "r1", URL: url, Payload: payload, CreatedAt: time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC)}
	}
	for name, tc := range map[string]struct {
		member    runs.Sealer
		delivered bool
	}{
		"same key":    {tagSealer{id: "k1"}, true},
		"another key": {tagSealer{id: "k2"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHistory(t)
			id := addOutbox(t, h, sealed(tagSealer{id: "k1"}))
			dl := fakeDeliverer{answers: map[string]func() (int, error){"http://ok": func() (int, error) { return 200, nil }}}
			start(t, h, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
				d.Outbox, d.Deliverer, d.Sealer = h, dl, tc.member
				c.OutboxInterval = 10 * time.Millisecond
			})
			rows := awaitOutbox(t, h, id)
			if tc.delivered {
				require.NotContains(t, rows, id, "opened and delivered")
				return
			}
			require.Contains(t, rows, id, "kept for a member with the key")
			require.Contains(t, *rows[id].LastError, "k1", "names the key it needs")
		})
	}
}
