package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
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

type fakeOutbox struct {
	mu        sync.Mutex
	items     []cluster.OutboxItem
	delivered []int64
	retries   map[int64]time.Time
	lastErr   map[int64]string
}

func (o *fakeOutbox) ClaimOutbox(_ context.Context, owner string, n int, lease time.Duration) ([]cluster.OutboxItem, error) {
	if owner == "" || lease <= 0 {
		return nil, errors.New("bad claim")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	k := min(n, len(o.items))
	got := o.items[:k]
	o.items = o.items[k:]
	return got, nil
}

func (o *fakeOutbox) OutboxDelivered(_ context.Context, id int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.delivered = append(o.delivered, id)
	return nil
}

func (o *fakeOutbox) OutboxRetry(_ context.Context, id int64, next time.Time, lastErr string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.retries[id] = next
	o.lastErr[id] = lastErr
	return nil
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
	ob := &fakeOutbox{retries: map[int64]time.Time{}, lastErr: map[int64]string{}}
	var clock *fakeClock
	body := []byte(`{"run_id":"r1"}`)
	add := func(id int64, u string) {
		ob.items = append(ob.items, cluster.OutboxItem{ID: id, RunID: "r1", URL: u, Payload: body,
			CreatedAt: time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC)})
	}
	add(1, "http://ok")
	add(2, "http://gone")
	add(3, "http://flaky")
	add(4, "http://creds")
	dl := fakeDeliverer{answers: map[string]func() (int, error){
		"http://ok":    func() (int, error) { return 200, nil },
		"http://gone":  func() (int, error) { return 404, nil },
		"http://flaky": func() (int, error) { return 503, nil },
		"http://creds": func() (int, error) {
			return 0, &url.Error{Op: "Post", URL: "http://user:pw@hook.example/x?sig=1", Err: errors.New("refused")}
		},
	}}
	start(t, newHistory(t), &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
		d.Outbox, d.Deliverer = ob, dl
		c.OutboxInterval = 10 * time.Millisecond
		clock = d.Clock.(*fakeClock)
	})
	require.Eventually(t, func() bool {
		ob.mu.Lock()
		defer ob.mu.Unlock()
		return len(ob.delivered)+len(ob.retries) == 4
	}, waitFor, tick)
	ob.mu.Lock()
	defer ob.mu.Unlock()
	require.ElementsMatch(t, []int64{1, 2}, ob.delivered, "2xx is delivered; 404 is final and dropped")
	require.Equal(t, clock.Now().Add(time.Second), ob.retries[3])
	require.Equal(t, "HTTP 503", ob.lastErr[3])
	require.Contains(t, ob.lastErr[4], "hook.example")
	require.NotContains(t, ob.lastErr[4], "pw")
	require.NotContains(t, ob.lastErr[4], "sig=")
}

type fakePurger struct {
	mu    sync.Mutex
	calls []runs.PurgeRequest
}

func (p *fakePurger) Purge(_ context.Context, req runs.PurgeRequest) (runs.PurgeResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, req)
	return runs.PurgeResult{Runs: 3}, nil
}

func TestPurgeLoopUsesTheRetentions(t *testing.T) {
	t.Parallel()
	p := &fakePurger{}
	h := start(t, newHistory(t), &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
		d.Purger = p
		c.RetainTerminal = 48 * time.Hour
		c.PurgeInterval = 20 * time.Millisecond
	})
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.calls) >= 2
	}, waitFor, tick, "purges at start and then every interval")
	p.mu.Lock()
	defer p.mu.Unlock()
	now := h.clock.Now()
	require.Equal(t, now.Add(-48*time.Hour), p.calls[0].RunsBefore)
	require.Equal(t, now.Add(-cluster.DefaultIdempotencyRetention), p.calls[0].IdempotencyBefore)
	require.Equal(t, now.Add(-cluster.DefaultRetainAudit), p.calls[0].AuditBefore, "audit entries are kept a year by default")
	require.Equal(t, now, p.calls[0].SignoutsBefore, "console sign-outs go when their cookies expired")
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
			ob := &fakeOutbox{retries: map[int64]time.Time{}, lastErr: map[int64]string{}}
			ob.items = append(ob.items, sealed(tagSealer{id: "k1"}))
			dl := fakeDeliverer{answers: map[string]func() (int, error){"http://ok": func() (int, error) { return 200, nil }}}
			start(t, newHistory(t), &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
				d.Outbox, d.Deliverer, d.Sealer = ob, dl, tc.member
				c.OutboxInterval = 10 * time.Millisecond
			})
			require.Eventually(t, func() bool {
				ob.mu.Lock()
				defer ob.mu.Unlock()
				return len(ob.delivered)+len(ob.retries) == 1
			}, waitFor, tick)
			ob.mu.Lock()
			defer ob.mu.Unlock()
			if tc.delivered {
				require.Equal(t, []int64{1}, ob.delivered)
				return
			}
			require.Contains(t, ob.retries, int64(1))
			require.Contains(t, ob.lastErr[1], "k1", "names the key it needs")
		})
	}
}
