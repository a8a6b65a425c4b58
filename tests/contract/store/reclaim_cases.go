package storecontract

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// shortTTL expires quickly by the database clock.
const shortTTL = 300 * time.Millisecond

// reclaimUntil calls Reclaim until it reports id, and returns that report.
func (e *env) reclaimUntil(t *testing.T, id string, build runs.CallbackBuilder) cluster.Reclaimed {
	t.Helper()
	var got cluster.Reclaimed
	require.Eventually(t, func() bool {
		done, err := e.s.Reclaim(e.ctx, build)
		if !assertNoError(t, err) {
			return false
		}
		for _, r := range done {
			if r.ID == id {
				got = r
				return true
			}
		}
		return false
	}, 10*time.Second, 50*time.Millisecond)
	return got
}

func reclaimCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"an expired lease is requeued, then poisoned at the attempt cap": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			c := e.claimOne(t, "p", shortTTL, func(r *runs.Record) { r.MaxAttempts = 2 })
			done, err := e.s.Reclaim(e.ctx, b.build)
			require.NoError(t, err)
			require.Empty(t, done, "an unexpired lease is left alone")

			require.Equal(t, cluster.Reclaimed{ID: c.ID, Name: c.Name, Outcome: "requeued"}, e.reclaimUntil(t, c.ID, b.build))
			got := e.get(t, c.ID)
			require.Equal(t, "pending", got.Status)
			require.Equal(t, 1, got.Attempt)
			require.Empty(t, got.Owner)
			require.Equal(t, run.Outcome("lost"), got.Attempts[0].Outcome)
			require.NotZero(t, got.Attempts[0].EndedAt)
			require.ErrorIs(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch},
				cluster.Outcome{Status: "completed"}, nil), run.ErrLeaseLost, "the old owner's result is discarded")

			again, err := e.s.Claim(e.ctx, e.owner, []string{"default"}, 1, shortTTL)
			require.NoError(t, err)
			require.Len(t, again, 1)
			require.Equal(t, 2, again[0].Attempt)
			require.Equal(t, cluster.Reclaimed{ID: c.ID, Name: c.Name, Outcome: "failed"}, e.reclaimUntil(t, c.ID, b.build))
			got = e.get(t, c.ID)
			require.Equal(t, "failed", got.Status)
			require.Equal(t, "poisoned", got.ErrorCode)
			require.Contains(t, got.ErrorMessage, "reclaimed 2 times")
			require.False(t, got.FinishedAt.IsZero())
			require.Len(t, got.Attempts, 2)
			require.Equal(t, run.Outcome("lost"), got.Attempts[1].Outcome)

			require.Len(t, b.seen, 1, "only the terminal transition builds a callback")
			require.Equal(t, "failed", b.seen[0].Status)
			require.Equal(t, "poisoned", b.seen[0].ErrorCode)
			items := e.outbox(t)
			require.Len(t, items, 1)
			require.Equal(t, c.ID, items[0].RunID)
		},
		"a renewed lease is not reclaimed": func(t *testing.T, e *env) {
			const ttl = time.Second
			c := e.claimOne(t, "p", ttl)
			deadline := time.Now().Add(2 * ttl)
			for time.Now().Before(deadline) {
				renewed, err := e.s.Renew(e.ctx, e.owner.InstanceID, []cluster.Ref{{ID: c.ID, Epoch: c.Epoch}}, ttl)
				require.NoError(t, err)
				require.Len(t, renewed, 1)
				done, err := e.s.Reclaim(e.ctx, nil)
				require.NoError(t, err)
				require.Empty(t, done)
				time.Sleep(ttl / 10)
			}
		},
		"a cancel-requested expired run ends cancelled": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			c := e.claimOne(t, "p", shortTTL)
			e.requestCancel(t, c.ID)
			require.Equal(t, cluster.Reclaimed{ID: c.ID, Name: c.Name, Outcome: "cancelled"}, e.reclaimUntil(t, c.ID, b.build))
			got := e.get(t, c.ID)
			require.Equal(t, "cancelled", got.Status)
			require.False(t, got.FinishedAt.IsZero())
			require.Len(t, b.seen, 1)
			require.Len(t, e.outbox(t), 1)
		},
		"a poisoned or cancelled reclaim promotes a queued sibling": func(t *testing.T, e *env) {
			c := e.claimOne(t, "inc", shortTTL, serial, func(r *runs.Record) { r.MaxAttempts = 1 })
			q := e.create(t, rec("inc", serial))
			require.Equal(t, "queued", q.Status)
			require.Equal(t, "failed", e.reclaimUntil(t, c.ID, nil).Outcome)
			require.Equal(t, "pending", e.get(t, q.ID).Status)
		},
		"orphans of other owners are reclaimed at once": func(t *testing.T, e *env) {
			mine := e.claimOne(t, "p", longTTL)
			other := e.create(t, rec("q"))
			got, err := e.s.Claim(e.ctx, cluster.Owner{InstanceID: "old-process"}, []string{"default"}, 1, longTTL)
			require.NoError(t, err)
			require.Equal(t, []string{other.ID}, ids(got))
			done, err := e.s.ReclaimOrphans(e.ctx, e.owner.InstanceID, nil)
			require.NoError(t, err)
			require.Equal(t, []cluster.Reclaimed{{ID: other.ID, Name: other.Name, Outcome: "requeued"}}, done)
			require.Equal(t, "running", e.get(t, mine.ID).Status)
			require.Equal(t, "pending", e.get(t, other.ID).Status)
		},
	}
}
