package storecontract

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

func leaseCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a claim sets the lease, the attempt and the attempt record": func(t *testing.T, e *env) {
			r := e.create(t, rec("p", func(r *runs.Record) { r.TimeoutSecs = 30; r.ShardCount = 2 }))
			before := time.Now().Add(-time.Second)
			got, err := e.s.Claim(e.ctx, e.owner, []string{"default"}, 10, longTTL)
			require.NoError(t, err)
			require.Len(t, got, 1)
			c := got[0]
			require.Equal(t, cluster.Claimed{ID: r.ID, Name: "p", Pool: "default", Epoch: 1, Attempt: 1, MaxAttempts: 3,
				Config: r.Config, TimeoutSecs: 30, LogicalAt: c.LogicalAt, RunDate: r.RunDate, CreatedAt: c.CreatedAt,
				ShardCount: 2}, c)
			require.Equal(t, r.LogicalAt.UnixMilli(), c.LogicalAt.UnixMilli())
			stored := e.get(t, r.ID)
			require.Equal(t, "running", stored.Status)
			require.Equal(t, e.owner.InstanceID, stored.Owner)
			require.Equal(t, e.owner.Listen, stored.OwnerListen)
			require.WithinDuration(t, time.Now().Add(longTTL), stored.LeaseExpiresAt, 5*time.Second)
			require.True(t, stored.ClaimedAt.After(before) && stored.StartedAt.Equal(stored.ClaimedAt))
			require.Len(t, stored.Attempts, 1)
			a := stored.Attempts[0]
			require.Equal(t, 1, a.N)
			require.Equal(t, e.owner.InstanceID, a.InstanceID)
			require.Equal(t, stored.ClaimedAt, a.ClaimedAt)
			require.Zero(t, a.EndedAt)
			require.Empty(t, a.Outcome)
		},
		"a claim returns the traceparent stored with the run, and so does a shard's claim": func(t *testing.T, e *env) {
			const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			traced := e.claimOne(t, "traced", longTTL, func(r *runs.Record) { r.Traceparent = tp })
			require.Equal(t, tp, traced.Traceparent, "the run's spans join the submitter's trace on any member")
			require.Empty(t, e.claimOne(t, "untraced", longTTL).Traceparent)
			split := e.sharded(t, "split", hashPlan(2), func(r *runs.Record) { r.Traceparent = tp })
			require.Equal(t, tp, split.Traceparent)
			shards := e.claimShards(t, 2, longTTL)
			require.Len(t, shards, 2)
			for _, sh := range shards {
				require.Equal(t, tp, sh.Run.Traceparent)
			}
		},
		"claims are oldest first, bounded, and honour pools": func(t *testing.T, e *env) {
			var defaults []string
			for range 5 {
				defaults = append(defaults, e.create(t, rec("p")).ID)
			}
			gpu := e.create(t, rec("g", func(r *runs.Record) { r.Pool = "gpu" }))
			got, err := e.s.Claim(e.ctx, e.owner, []string{"default"}, 3, longTTL)
			require.NoError(t, err)
			require.Equal(t, defaults[:3], ids(got))
			got, err = e.s.Claim(e.ctx, e.owner, []string{"default"}, 10, longTTL)
			require.NoError(t, err)
			require.Equal(t, defaults[3:], ids(got), "a member never claims another pool's run")
			got, err = e.s.Claim(e.ctx, e.owner, []string{"default", "gpu"}, 10, longTTL)
			require.NoError(t, err)
			require.Equal(t, []string{gpu.ID}, ids(got))
			got, err = e.s.Claim(e.ctx, e.owner, []string{"default", "gpu"}, 10, longTTL)
			require.NoError(t, err)
			require.Empty(t, got)
		},
		"a queued run is never claimed": func(t *testing.T, e *env) {
			e.claimOne(t, "inc", longTTL, serial)
			e.create(t, rec("inc", serial))
			got, err := e.s.Claim(e.ctx, e.owner, []string{"default"}, 10, longTTL)
			require.NoError(t, err)
			require.Empty(t, got)
		},
		"4 concurrent claimers over 1,000 runs claim each exactly once": func(t *testing.T, e *env) {
			const total = 1000
			want := map[string]bool{}
			for range total {
				want[e.create(t, rec("bulk")).ID] = true
			}
			var (
				mu   sync.Mutex
				seen = map[string]int{}
				wg   sync.WaitGroup
			)
			for m := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					owner := cluster.Owner{InstanceID: "member-" + string(rune('a'+m))}
					for {
						got, err := e.s.Claim(e.ctx, owner, []string{"default"}, 25, longTTL)
						if !assertNoError(t, err) || len(got) == 0 {
							return
						}
						mu.Lock()
						for _, c := range got {
							seen[c.ID]++
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			require.Len(t, seen, total)
			for id, n := range seen {
				require.True(t, want[id])
				require.Equal(t, 1, n, "run %s claimed %d times", id, n)
			}
		},
		"a claim batch and a renewal are one statement each": func(t *testing.T, e *env) {
			for range 5 {
				e.create(t, rec("p"))
			}
			var got []cluster.Claimed
			stmts := e.hook.during(func() {
				var err error
				got, err = e.s.Claim(e.ctx, e.owner, []string{"default"}, 5, longTTL)
				require.NoError(t, err)
			})
			require.Len(t, got, 5)
			require.Len(t, stmts, 1, "claim: %v", stmts)
			require.True(t, strings.HasPrefix(strings.TrimSpace(stmts[0]), "UPDATE"), stmts[0])
			held := refs(got)
			var renewed []cluster.Ref
			stmts = e.hook.during(func() {
				var err error
				renewed, err = e.s.Renew(e.ctx, e.owner.InstanceID, held, longTTL)
				require.NoError(t, err)
			})
			require.Len(t, stmts, 1, "renew: %v", stmts)
			require.ElementsMatch(t, held, renewed)
		},
		"renewal extends the lease by the database clock": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", 2*time.Second)
			first := e.get(t, c.ID).LeaseExpiresAt
			renewed, err := e.s.Renew(e.ctx, e.owner.InstanceID, []cluster.Ref{{ID: c.ID, Epoch: c.Epoch}}, longTTL)
			require.NoError(t, err)
			require.Equal(t, []cluster.Ref{{ID: c.ID, Epoch: c.Epoch}}, renewed)
			require.True(t, e.get(t, c.ID).LeaseExpiresAt.After(first.Add(30*time.Second)))
		},
		"the earliest lease expiry is read by the database clock": func(t *testing.T, e *env) {
			_, ok, err := e.s.NextExpiry(e.ctx)
			require.NoError(t, err)
			require.False(t, ok, "no lease is held")
			e.claimOne(t, "late", longTTL)
			soon := e.claimOne(t, "soon", 20*time.Second)
			left, ok, err := e.s.NextExpiry(e.ctx)
			require.NoError(t, err)
			require.True(t, ok)
			require.LessOrEqual(t, left, 20*time.Second, "the earliest of the leases")
			require.Greater(t, left, 10*time.Second, "measured from the database's now")
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: soon.ID, Epoch: soon.Epoch},
				cluster.Outcome{Status: "completed"}, nil))
			left, ok, err = e.s.NextExpiry(e.ctx)
			require.NoError(t, err)
			require.True(t, ok)
			require.Greater(t, left, 20*time.Second, "an ended run holds no lease")
		},
		"stale epochs and other owners are lease-lost": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL)
			stale := cluster.Ref{ID: c.ID, Epoch: c.Epoch - 1}
			require.ErrorIs(t, e.s.Progress(e.ctx, e.owner.InstanceID, stale, cluster.Progress{RowsRead: 1}), run.ErrLeaseLost)
			require.ErrorIs(t, e.s.Finish(e.ctx, e.owner.InstanceID, stale, cluster.Outcome{Status: "completed"}, nil), run.ErrLeaseLost)
			require.ErrorIs(t, e.s.HandBack(e.ctx, e.owner.InstanceID, stale, cluster.Progress{}), run.ErrLeaseLost)
			renewed, err := e.s.Renew(e.ctx, e.owner.InstanceID, []cluster.Ref{stale}, longTTL)
			require.NoError(t, err)
			require.Empty(t, renewed, "a stale ref is missing from the answer")

			ref := cluster.Ref{ID: c.ID, Epoch: c.Epoch}
			require.ErrorIs(t, e.s.Progress(e.ctx, "member-b", ref, cluster.Progress{}), run.ErrLeaseLost)
			require.ErrorIs(t, e.s.Finish(e.ctx, "member-b", ref, cluster.Outcome{Status: "completed"}, nil), run.ErrLeaseLost)
			renewed, err = e.s.Renew(e.ctx, "member-b", []cluster.Ref{ref}, longTTL)
			require.NoError(t, err)
			require.Empty(t, renewed)
			require.ErrorIs(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: "missing", Epoch: 1}, cluster.Outcome{Status: "completed"}, nil), run.ErrLeaseLost)

			stored := e.get(t, c.ID)
			require.Equal(t, "running", stored.Status, "nothing stale changed the run")
			require.Zero(t, stored.Stats.RowsRead)
		},
		"finish is refused for a status that is not terminal": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL)
			err := e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch}, cluster.Outcome{Status: "pending"}, nil)
			require.ErrorIs(t, err, run.ErrInvalidTransition)
			require.Equal(t, "running", e.get(t, c.ID).Status)
		},
		"finish writes status, stats, error and closes the attempt": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL)
			ref := cluster.Ref{ID: c.ID, Epoch: c.Epoch}
			require.NoError(t, e.s.Progress(e.ctx, e.owner.InstanceID, ref, cluster.Progress{RowsRead: 5, ElapsedMS: 10}))
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, ref, cluster.Outcome{Status: "failed",
				ErrorCode: "pipeline_error", ErrorMessage: "sink refused a row",
				Stats: cluster.Progress{RowsRead: 10, RowsWritten: 8, Pages: 2, Bytes: 100, ElapsedMS: 40}}, nil))
			got := e.get(t, c.ID)
			require.Equal(t, "failed", got.Status)
			require.Equal(t, runs.Stats{RowsRead: 10, RowsWritten: 8, Pages: 2, Bytes: 100, ElapsedMS: 40}, got.Stats)
			require.Equal(t, "pipeline_error", got.ErrorCode)
			require.Equal(t, "sink refused a row", got.ErrorMessage)
			require.False(t, got.FinishedAt.IsZero())
			require.Empty(t, got.Owner)
			require.True(t, got.LeaseExpiresAt.IsZero())
			require.Len(t, got.Attempts, 1)
			require.Equal(t, run.Outcome("failed"), got.Attempts[0].Outcome)
			require.NotZero(t, got.Attempts[0].EndedAt)
			require.ErrorIs(t, e.s.Progress(e.ctx, e.owner.InstanceID, ref, cluster.Progress{}), run.ErrLeaseLost, "a finished run has no lease")
		},
		"hand-back spends no attempt and keeps running time": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL)
			ref := cluster.Ref{ID: c.ID, Epoch: c.Epoch}
			require.NoError(t, e.s.Progress(e.ctx, e.owner.InstanceID, ref, cluster.Progress{ElapsedMS: 100}))
			require.NoError(t, e.s.HandBack(e.ctx, e.owner.InstanceID, ref, cluster.Progress{RowsWritten: 3, ElapsedMS: 150}))
			got := e.get(t, c.ID)
			require.Equal(t, "pending", got.Status)
			require.Zero(t, got.Attempt, "the attempt is given back")
			require.Empty(t, got.Owner)
			require.Equal(t, int64(150), got.Stats.ElapsedMS)
			require.Len(t, got.Attempts, 1)
			require.Equal(t, run.Outcome("handed_back"), got.Attempts[0].Outcome)
			require.True(t, got.FinishedAt.IsZero())

			again, err := e.s.Claim(e.ctx, e.owner, []string{"default"}, 1, longTTL)
			require.NoError(t, err)
			require.Len(t, again, 1)
			require.Equal(t, 1, again[0].Attempt)
			require.Equal(t, c.Epoch+1, again[0].Epoch)
			require.Equal(t, int64(150), again[0].ElapsedMS, "earlier attempts' running time")
			require.NoError(t, e.s.Progress(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: again[0].Epoch}, cluster.Progress{ElapsedMS: 50}))
			require.Equal(t, int64(200), e.get(t, c.ID).Stats.ElapsedMS, "running time adds up across attempts")
			require.Len(t, e.get(t, c.ID).Attempts, 2)
		},
	}
}

func ids(cs []cluster.Claimed) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func refs(cs []cluster.Claimed) []cluster.Ref {
	out := make([]cluster.Ref, len(cs))
	for i, c := range cs {
		out[i] = cluster.Ref{ID: c.ID, Epoch: c.Epoch}
	}
	return out
}

// assertNoError reports err from a goroutine (require must not be called off the test's
// goroutine) and tells whether it was nil.
func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Errorf("unexpected error: %v", err)
		return false
	}
	return true
}
