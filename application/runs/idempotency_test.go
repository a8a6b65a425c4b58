package runs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

func TestIdempotencyFreshReplayConflictDeleted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	r := req(operator, baseConfig)
	r.IdempotencyKey = "k-1"

	fresh := h.submit(t, r)
	require.False(t, fresh.Replayed)

	again := h.submit(t, r)
	require.True(t, again.Replayed)
	require.Equal(t, fresh.RunID, again.RunID)
	require.Equal(t, "pending", again.Status)
	require.Equal(t, 1, h.waker.count(), "a replay wakes nobody")
	e := h.store.lastAudit()
	require.Equal(t, runs.ActionSubmitted, e.Action)
	require.Equal(t, true, e.Details["replayed"])

	// The replay answers the run's current status.
	h.store.setStatus(fresh.RunID, run.Running)
	again = h.submit(t, r)
	require.Equal(t, "running", again.Status)

	other := r
	other.Labels = map[string]string{"x": "y"}
	_, err := h.svc.Submit(ctx, other)
	require.ErrorIs(t, err, runs.ErrIdempotencyConflict)

	h.store.setStatus(fresh.RunID, run.Completed)
	require.NoError(t, h.svc.Delete(ctx, admin, fresh.RunID))
	_, err = h.svc.Submit(ctx, r)
	require.ErrorIs(t, err, runs.ErrRunDeleted)
	_, err = h.svc.Submit(ctx, other)
	require.ErrorIs(t, err, runs.ErrIdempotencyConflict, "another request with the key is a conflict even after the delete")
}

func TestIdempotencyScopes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := req(operator, baseConfig)
	r.IdempotencyKey = "same"
	a := h.submit(t, r)

	r.Principal = admin // another untenanted principal: its own scope
	b := h.submit(t, r)
	require.NotEqual(t, a.RunID, b.RunID)
	require.False(t, b.Replayed)

	// Tenanted runs share one scope per tenant, whoever submits them.
	r.Tenant = "acme"
	r.Principal = acme
	c := h.submit(t, r)
	r.Principal = operator
	d := h.submit(t, r)
	require.True(t, d.Replayed)
	require.Equal(t, c.RunID, d.RunID)
}

func TestFingerprintStableAcrossFormatAndKeyOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := req(operator, baseConfig)
	r.IdempotencyKey = "k"
	r.Labels = map[string]string{"a": "1", "b": "2"}
	r.Params = map[string]string{"region": "us"}
	r.Callback = &runs.Callback{URL: "https://hooks.example.com/x", On: []string{"failed", "completed"}, ExtraFields: map[string]any{"p": 1, "q": map[string]any{"z": 1, "a": 2}}}
	first := h.submit(t, r)

	same := r
	same.Config = []byte(baseConfigJSON)
	same.Labels = map[string]string{"b": "2", "a": "1"}
	same.Callback = &runs.Callback{URL: "https://hooks.example.com/x", On: []string{"completed", "failed", "completed"}, ExtraFields: map[string]any{"q": map[string]any{"a": 2, "z": 1}, "p": 1}}
	res := h.submit(t, same)
	require.True(t, res.Replayed, "the same document as JSON in another key order is the same request")
	require.Equal(t, first.RunID, res.RunID)

	// Absent and empty collections are the same request.
	r2 := req(operator, baseConfig)
	r2.IdempotencyKey = "k2"
	h.submit(t, r2)
	r2.Labels = map[string]string{}
	r2.Params = map[string]string{}
	require.True(t, h.submit(t, r2).Replayed)
}

func TestFingerprintSensitiveToEveryField(t *testing.T) {
	t.Parallel()
	clk := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	otherClk := clk.Add(time.Second)
	base := func() runs.SubmitRequest {
		r := req(operator, baseConfig)
		r.IdempotencyKey = "k"
		r.Name = "orders"
		r.Labels = map[string]string{"a": "1"}
		r.Pool = "default"
		r.TimeoutSecs = 30
		r.Callback = &runs.Callback{URL: "https://hooks.example.com/x"}
		r.Clock = &clk
		r.Params = map[string]string{"region": "eu"}
		r.RunKey = "rk"
		return r
	}
	variants := map[string]func(*runs.SubmitRequest){
		"config": func(r *runs.SubmitRequest) { r.Config = []byte(baseConfig + "# same but\nshard: {count: 1}\n") },
		"raw config": func(r *runs.SubmitRequest) {
			r.Config = []byte(baseConfig[:len(baseConfig)-1] + "\n  other: { type: string }\n")
		},
		"name":         func(r *runs.SubmitRequest) { r.Name = "orders-b" },
		"labels":       func(r *runs.SubmitRequest) { r.Labels = map[string]string{"a": "2"} },
		"pool":         func(r *runs.SubmitRequest) { r.Pool = "other" },
		"no pool":      func(r *runs.SubmitRequest) { r.Pool = "" },
		"timeout_secs": func(r *runs.SubmitRequest) { r.TimeoutSecs = 31 },
		"callback url": func(r *runs.SubmitRequest) { r.Callback = &runs.Callback{URL: "https://hooks.example.com/y"} },
		"callback on": func(r *runs.SubmitRequest) {
			r.Callback = &runs.Callback{URL: "https://hooks.example.com/x", On: []string{"failed"}}
		},
		"callback extra": func(r *runs.SubmitRequest) {
			r.Callback = &runs.Callback{URL: "https://hooks.example.com/x", ExtraFields: map[string]any{"k": "v"}}
		},
		"no callback": func(r *runs.SubmitRequest) { r.Callback = nil },
		"clock":       func(r *runs.SubmitRequest) { r.Clock = &otherClk },
		"no clock":    func(r *runs.SubmitRequest) { r.Clock = nil },
		"params":      func(r *runs.SubmitRequest) { r.Params = map[string]string{"region": "us"} },
		"run_key":     func(r *runs.SubmitRequest) { r.RunKey = "rk2" },
	}
	for name, edit := range variants {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, withConfig(func(c *runs.Config) { c.Pools = []string{"default", "other"} }))
			first := h.submit(t, base())
			again := h.submit(t, base())
			require.True(t, again.Replayed)
			require.Equal(t, first.RunID, again.RunID)

			r := base()
			edit(&r)
			_, err := h.svc.Submit(context.Background(), r)
			require.ErrorIs(t, err, runs.ErrIdempotencyConflict)
		})
	}
}

func TestRunKeyReplay(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := req(operator, baseConfig)
	r.RunKey = "2026-05-01"
	first := h.submit(t, r)
	again := h.submit(t, r)
	require.True(t, again.Replayed)
	require.Equal(t, first.RunID, again.RunID)
	require.Equal(t, "pending", again.Status)

	// run_key is unique per pipeline key: another name or tenant is another run.
	r.Name = "orders-b"
	require.False(t, h.submit(t, r).Replayed)
	r.Name = ""
	r.Tenant = "acme"
	require.False(t, h.submit(t, r).Replayed)
}
