package runs_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

func TestCancelQueuedOrPendingIsImmediate(t *testing.T) {
	t.Parallel()
	for _, st := range []run.Status{run.Pending, run.Queued} {
		t.Run(string(st), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if st == run.Queued {
				h.submit(t, req(operator, serialConfig)) // the active run the next one waits behind
			}
			r := req(operator, serialConfig)
			r.Callback = &runs.Callback{URL: "https://hooks.example.com/done", On: []string{"cancelled"}}
			id := h.submit(t, r).RunID
			require.Equal(t, string(st), h.store.get(id).Status)

			rec, immediate, err := h.svc.Cancel(context.Background(), operator, id)
			require.NoError(t, err)
			require.True(t, immediate)
			require.Equal(t, "cancelled", rec.Status)
			require.Empty(t, rec.Config)
			require.Empty(t, h.store.cancelCalls(), "no flag for a run nobody executes")
			require.Empty(t, h.canceller.fired)

			// The callback row was written by the cancel itself.
			outbox := h.store.outbox()
			require.Len(t, outbox, 1)
			require.Equal(t, "https://hooks.example.com/done", outbox[0].URL)
			var body map[string]any
			require.NoError(t, json.Unmarshal(outbox[0].Payload, &body))
			require.Equal(t, "cancelled", body["status"])
			require.Equal(t, id, body["run_id"])

			require.Equal(t, []string{"orders:cancelled/cancelled"}, h.metrics.counted(), "the run this cancel ended is counted")

			e := h.store.lastAudit()
			require.Equal(t, runs.ActionCancel, e.Action)
			require.Equal(t, "cancelled", e.Details["outcome"])
			require.Equal(t, string(st), e.Details["from"])
		})
	}
}

func TestCancelRunningLocalFiresTokenAndSetsFlag(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit(t, req(operator, baseConfig)).RunID
	h.store.setStatus(id, run.Running)
	h.canceller.local[id] = true

	rec, immediate, err := h.svc.Cancel(context.Background(), operator, id)
	require.NoError(t, err)
	require.False(t, immediate)
	require.Equal(t, "running", rec.Status)
	require.True(t, rec.CancelRequested)
	require.Equal(t, []string{id}, h.canceller.fired)
	require.Equal(t, []string{id}, h.store.cancelCalls(), "the durable flag is set too")
	require.Empty(t, h.store.outbox())
	require.Empty(t, h.metrics.counted(), "the member that stops it counts it")
	require.Equal(t, "requested", h.store.lastAudit().Details["outcome"])
}

func TestCancelRunningOnPeerSetsFlag(t *testing.T) {
	t.Parallel()
	for _, st := range []run.Status{run.Running, run.Sharded} {
		h := newHarness(t)
		id := h.submit(t, req(operator, baseConfig)).RunID
		h.store.setStatus(id, st)
		if st == run.Sharded {
			h.store.claimShard(id) // a shard executes on a peer
		}

		rec, immediate, err := h.svc.Cancel(context.Background(), admin, id)
		require.NoError(t, err)
		require.False(t, immediate)
		require.True(t, rec.CancelRequested)
		require.Empty(t, h.canceller.fired)
		require.Equal(t, []string{id}, h.store.cancelCalls())
		got, err := h.store.Get(context.Background(), id)
		require.NoError(t, err)
		require.True(t, got.CancelRequested)
	}
}

// A sharded run that ends with the cancel is counted once: by the cancel when it ended the
// run itself (no shard was running, so no member settles it), by the member of its last
// shard when that ended it between the flag and the re-read.
func TestCancelShardedThatEndsAtOnce(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		shardRunning bool
		counted      []string
	}{
		"no shard running":        {counted: []string{"orders:cancelled/cancelled"}},
		"its last shard ended it": {shardRunning: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			id := h.submit(t, req(operator, baseConfig)).RunID
			h.store.setStatus(id, run.Sharded)
			if tc.shardRunning {
				// A member executes one shard, and stops it (ending the run) right after
				// the flag is set: between the cancel and the service's re-read.
				ref := h.store.claimShard(id)
				h.store.afterCancel(func() { h.store.finishShard(ref, run.Cancelled) })
			}

			rec, immediate, err := h.svc.Cancel(context.Background(), operator, id)
			require.NoError(t, err)
			require.True(t, immediate, "the run ended")
			require.Equal(t, "cancelled", rec.Status)
			require.Equal(t, "cancelled", h.store.lastAudit().Details["outcome"])
			require.Equal(t, tc.counted, h.metrics.counted())
		})
	}
}

func TestCancelRacingAClaimSignalsTheRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit(t, req(operator, baseConfig)).RunID
	h.store.mu.Lock()
	h.store.claimBeforeCancel = true
	h.store.mu.Unlock()

	rec, immediate, err := h.svc.Cancel(context.Background(), operator, id)
	require.NoError(t, err)
	require.False(t, immediate)
	require.Equal(t, "running", rec.Status)
	require.Equal(t, []string{id}, h.store.cancelCalls())
}

func TestCancelTerminalIsImmediateAndUnchanged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit(t, req(operator, baseConfig)).RunID
	h.store.setStatus(id, run.Completed)
	rec, immediate, err := h.svc.Cancel(context.Background(), operator, id)
	require.NoError(t, err)
	require.True(t, immediate)
	require.Equal(t, "completed", rec.Status)
	require.Empty(t, h.store.cancelCalls())
	require.Empty(t, h.store.outbox())
	require.Equal(t, "already_terminal", h.store.lastAudit().Details["outcome"])
}

func TestCancelRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.submit(t, req(operator, baseConfig)).RunID
	ctx := context.Background()
	_, _, err := h.svc.Cancel(ctx, viewer, id)
	require.ErrorIs(t, err, runs.ErrForbidden)
	// A tenant operator cancels its own tenant's runs only (SPEC §2.2); others are hidden.
	_, _, err = h.svc.Cancel(ctx, acme, id)
	require.ErrorIs(t, err, run.ErrNotFound)
	_, _, err = h.svc.Cancel(ctx, runs.Principal{Name: "acme-viewer", Role: runs.Viewer, Tenant: "acme"}, id)
	require.ErrorIs(t, err, runs.ErrForbidden)
	_, _, err = h.svc.Cancel(ctx, operator, "no-such-run")
	require.ErrorIs(t, err, run.ErrNotFound)
	got, err := h.store.Get(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "pending", got.Status)

	own := req(acme, baseConfig)
	own.Tenant, own.TriggerKind = "acme", "tenant"
	ownID := h.submit(t, own).RunID
	rec, immediate, err := h.svc.Cancel(ctx, acme, ownID)
	require.NoError(t, err)
	require.True(t, immediate)
	require.Equal(t, "cancelled", rec.Status)
}

func TestDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	// One run in each status that is not an end: a serial pipeline's second run waits
	// queued behind the first; the others move as a member moves them.
	active := h.submit(t, req(operator, serialConfig)).RunID
	queued := h.submit(t, req(operator, serialConfig)).RunID
	require.Equal(t, "queued", h.store.get(queued).Status)
	byStatus := map[run.Status]string{run.Queued: queued, run.Pending: active}
	for _, st := range []run.Status{run.Running, run.Sharded} {
		byStatus[st] = h.submit(t, req(operator, baseConfig)).RunID
		h.store.setStatus(byStatus[st], st)
	}
	for st, id := range byStatus {
		err := h.svc.Delete(ctx, admin, id)
		require.ErrorIs(t, err, runs.ErrRunNotTerminal, st)
	}
	id := h.submit(t, req(operator, baseConfig)).RunID
	h.store.setStatus(id, run.Failed)
	require.ErrorIs(t, h.svc.Delete(ctx, operator, id), runs.ErrForbidden, "delete is admin only")
	require.ErrorIs(t, h.svc.Delete(ctx, globex, id), runs.ErrForbidden, "never a tenant principal")

	require.NoError(t, h.svc.Delete(ctx, admin, id))
	_, err := h.store.Get(ctx, id)
	require.ErrorIs(t, err, run.ErrNotFound)
	e := h.store.lastAudit()
	require.Equal(t, runs.ActionDeleted, e.Action)
	require.Equal(t, id, e.RunID)
	require.Equal(t, "alice", e.Actor)

	require.ErrorIs(t, h.svc.Delete(ctx, admin, id), run.ErrNotFound)
}

func TestRollback(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withConfig(func(c *runs.Config) { c.Pools = []string{"default", "gpu"} }))
	ctx := context.Background()
	r := req(operator, baseConfig)
	r.Name = "orders-x"
	r.Pool = "gpu"
	r.Labels = map[string]string{"team": "data"}
	r.TimeoutSecs = 90
	r.RunKey = "once"
	r.Tenant = "acme"
	r.Callback = &runs.Callback{URL: "https://hooks.example.com/x"}
	orig := h.submit(t, r).RunID
	h.store.setStatus(orig, run.Failed)

	res, err := h.svc.Rollback(ctx, operator, orig, nil)
	require.NoError(t, err)
	require.NotEqual(t, orig, res.RunID)
	require.False(t, res.Replayed)
	rec, err := h.store.Get(ctx, res.RunID)
	require.NoError(t, err)
	require.Equal(t, "rollback", rec.TriggerKind)
	require.Equal(t, baseConfig, rec.Config)
	require.Equal(t, "orders-x", rec.Name)
	require.Equal(t, "gpu", rec.Pool)
	require.Equal(t, "acme", rec.Tenant)
	require.Equal(t, map[string]string{"team": "data"}, rec.Labels)
	require.Equal(t, 90, rec.TimeoutSecs)
	require.Empty(t, rec.RunKey, "a rollback is a new run, not a replay of the key")
	require.Equal(t, "https://hooks.example.com/x", rec.Callback.URL)
	e := h.store.lastAudit()
	require.Equal(t, runs.ActionSubmitted, e.Action)
	require.Equal(t, orig, e.Details["rollback_of"])

	// A config in the request replaces the stored one.
	override := baseConfig + "shard: {count: 2}\n"
	res, err = h.svc.Rollback(ctx, admin, orig, []byte(override))
	require.NoError(t, err)
	rec, err = h.store.Get(ctx, res.RunID)
	require.NoError(t, err)
	require.Equal(t, override, rec.Config)
	require.Equal(t, 2, rec.ShardCount)

	_, err = h.svc.Rollback(ctx, viewer, orig, nil)
	require.ErrorIs(t, err, runs.ErrForbidden)
	_, err = h.svc.Rollback(ctx, acme, orig, nil)
	require.ErrorIs(t, err, runs.ErrForbidden)
	_, err = h.svc.Rollback(ctx, operator, "missing", nil)
	require.ErrorIs(t, err, run.ErrNotFound)
	_, err = h.svc.Rollback(ctx, operator, orig, []byte("version: 2\n"))
	require.Error(t, err, "the override goes through every submit check")
}

func TestPurge(t *testing.T) {
	t.Parallel()
	// The history stamps finished_at with its own clock, so the service's clock moves
	// forward instead: first to 3 days after the runs finished, then to 8.
	now := &movingClock{t: time.Now()}
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Clock = now }))
	old := h.submit(t, req(operator, baseConfig)).RunID
	h.store.setStatus(old, run.Completed)
	active := h.submit(t, req(operator, baseConfig)).RunID

	now.add(3 * 24 * time.Hour)
	n, err := h.svc.Purge(context.Background(), 7*24*time.Hour)
	require.NoError(t, err)
	require.Zero(t, n, "finished 3 days ago: kept for the 7 days")
	now.add(5 * 24 * time.Hour)
	n, err = h.svc.Purge(context.Background(), 7*24*time.Hour)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = h.store.Get(context.Background(), old)
	require.ErrorIs(t, err, run.ErrNotFound)
	_, err = h.store.Get(context.Background(), active)
	require.NoError(t, err, "a run that has not ended is never purged")
	e := h.store.lastAudit()
	require.Equal(t, runs.ActionPurged, e.Action)
	require.Equal(t, "system", e.Actor)
}
