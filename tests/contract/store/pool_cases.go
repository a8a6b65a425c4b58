package storecontract

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// poolTTL is the lease TTL the pool cases judge liveness with.
const poolTTL = 30 * time.Second

// heartbeat stores a member row serving pools (nil: a release without pool support).
func (e *env) heartbeat(t *testing.T, id string, pools []string, draining bool) {
	t.Helper()
	require.NoError(t, e.s.Heartbeat(e.ctx, cluster.MemberRow{InstanceID: id, Host: "host-" + id, PID: 1,
		Listen: id + ":8080", Version: "test", Pools: pools, MaxConcurrent: 4, StateFormatMax: 2, VaultFormatMax: 1,
		Draining: draining, StartedAt: time.Now()}))
}

// age moves a member's heartbeat (and clean stop, when it has one) d into the past.
func (e *env) age(t *testing.T, id string, d time.Duration) {
	t.Helper()
	_, err := e.s.DB().NewRaw(`UPDATE sluice_members SET heartbeat_at = heartbeat_at - ?,
  stopped_at = CASE WHEN stopped_at IS NULL THEN NULL ELSE stopped_at - ? END WHERE instance_id = ?`,
		d.Milliseconds(), d.Milliseconds(), id).Exec(e.ctx)
	require.NoError(t, err)
}

// createdAgo makes a run created d ago.
func createdAgo(d time.Duration) func(*runs.Record) {
	return func(r *runs.Record) { r.CreatedAt = r.CreatedAt.Add(-d) }
}

// planned moves the planning of a sharded run's shards d into the past.
func (e *env) planned(t *testing.T, runID string, d time.Duration) {
	t.Helper()
	_, err := e.s.DB().NewRaw(`UPDATE sluice_shards SET created_at = created_at - ? WHERE run_id = ?`,
		d.Milliseconds(), runID).Exec(e.ctx)
	require.NoError(t, err)
}

func inPool(p string) func(*runs.Record) { return func(r *runs.Record) { r.Pool = p } }

func (e *env) failUnserved(t *testing.T, wait time.Duration, build runs.CallbackBuilder) []cluster.PoolTimedOut {
	t.Helper()
	got, err := e.s.FailUnservedPools(e.ctx, poolTTL, wait, build)
	require.NoError(t, err)
	return got
}

func poolCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a pool nobody serves fails its runs once they waited, each once": func(t *testing.T, e *env) {
			e.heartbeat(t, "m-default", []string{"default"}, false)
			busy := e.claimOne(t, "g0", longTTL, inPool("gpu"), createdAgo(time.Minute))
			old := e.create(t, rec("g", inPool("gpu"), createdAgo(10*time.Second)))
			fresh := e.create(t, rec("g2", inPool("gpu")))
			served := e.create(t, rec("d", createdAgo(time.Minute)))

			b := &builder{ok: true}
			failed := e.failUnserved(t, 5*time.Second, b.build)
			require.Equal(t, []cluster.PoolTimedOut{{ID: old.ID, Name: old.Name, Pool: "gpu"}}, failed,
				"only the pending gpu run that waited 5 s: not the fresh one, not the running one, not the served pool")
			r := e.get(t, old.ID)
			require.Equal(t, "failed", r.Status)
			require.Equal(t, string(run.CodePoolUnavailable), r.ErrorCode)
			require.Contains(t, r.ErrorMessage, `pool "gpu" has had no live member for 5s (--pool-wait-timeout-secs)`)
			require.Contains(t, r.ErrorMessage, "start a member with --pool gpu")
			require.False(t, r.FinishedAt.IsZero())
			require.Zero(t, r.Attempt, "no attempt was spent")
			items := e.outbox(t)
			require.Len(t, items, 1, "the callback fires")
			require.Equal(t, old.ID, items[0].RunID)
			require.Len(t, b.seen, 1)
			require.Equal(t, "failed", b.seen[0].Status)
			require.Equal(t, string(run.CodePoolUnavailable), b.seen[0].ErrorCode)

			require.Empty(t, e.failUnserved(t, 5*time.Second, b.build), "a failed run is failed once")
			require.Equal(t, "pending", e.get(t, fresh.ID).Status)
			require.Equal(t, "pending", e.get(t, served.ID).Status)
			require.Equal(t, "running", e.get(t, busy.ID).Status)
		},
		"the wait counts from the last lease expiry of the pool's members": func(t *testing.T, e *env) {
			e.heartbeat(t, "m-gpu", []string{"gpu", "default"}, false)
			e.age(t, "m-gpu", poolTTL+10*time.Second) // its lease ran out 10 s ago
			r := e.create(t, rec("g", inPool("gpu"), createdAgo(time.Hour)))
			d := e.create(t, rec("d", createdAgo(time.Hour)))
			require.Empty(t, e.failUnserved(t, 15*time.Second, nil), "unserved for 10 s only")
			got := e.failUnserved(t, 5*time.Second, nil)
			require.ElementsMatch(t, []cluster.PoolTimedOut{{ID: r.ID, Name: r.Name, Pool: "gpu"}, {ID: d.ID, Name: d.Name, Pool: "default"}}, got)
		},
		"a live member keeps its pools served; a draining one does not, until its lease runs out": func(t *testing.T, e *env) {
			r := e.create(t, rec("g", inPool("gpu"), createdAgo(time.Hour)))
			e.heartbeat(t, "m-gpu", []string{"gpu"}, false)
			require.Empty(t, e.failUnserved(t, time.Millisecond, nil))
			e.heartbeat(t, "m-gpu", []string{"gpu"}, true)
			require.Empty(t, e.failUnserved(t, time.Second, nil),
				"a draining member serves nothing, but the pool counts as unserved from its lease expiry")
			e.age(t, "m-gpu", poolTTL+10*time.Second)
			require.Equal(t, []cluster.PoolTimedOut{{ID: r.ID, Name: r.Name, Pool: "gpu"}}, e.failUnserved(t, 5*time.Second, nil))
		},
		"a clean stop starts the wait": func(t *testing.T, e *env) {
			r := e.create(t, rec("g", inPool("gpu"), createdAgo(time.Hour)))
			e.heartbeat(t, "m-gpu", []string{"gpu"}, false)
			require.NoError(t, e.s.MarkStopped(e.ctx, "m-gpu"))
			require.Empty(t, e.failUnserved(t, 5*time.Second, nil), "stopped just now")
			e.age(t, "m-gpu", 10*time.Second)
			require.Equal(t, []cluster.PoolTimedOut{{ID: r.ID, Name: r.Name, Pool: "gpu"}}, e.failUnserved(t, 5*time.Second, nil))
		},
		"a member without pool support serves the default pool only": func(t *testing.T, e *env) {
			e.heartbeat(t, "legacy", nil, false)
			d := e.create(t, rec("d", createdAgo(time.Hour)))
			g := e.create(t, rec("g", inPool("gpu"), createdAgo(time.Hour)))
			require.Equal(t, []cluster.PoolTimedOut{{ID: g.ID, Name: g.Name, Pool: "gpu"}}, e.failUnserved(t, time.Second, nil))
			require.Equal(t, "pending", e.get(t, d.ID).Status)
		},
		"a queued run waits behind its sibling and is not failed": func(t *testing.T, e *env) {
			first := e.create(t, rec("inc", inPool("gpu"), serial, createdAgo(time.Hour)))
			queued := e.create(t, rec("inc", inPool("gpu"), serial, createdAgo(time.Hour)))
			require.Equal(t, "queued", e.get(t, queued.ID).Status)
			require.Equal(t, []cluster.PoolTimedOut{{ID: first.ID, Name: first.Name, Pool: "gpu"}}, e.failUnserved(t, time.Second, nil))
			require.Equal(t, "pending", e.get(t, queued.ID).Status, "the failure promotes the queued sibling")
		},
		"the pending shards of a sharded run starve with its pool, and the run fails once": func(t *testing.T, e *env) {
			e.heartbeat(t, "m-default", []string{"default"}, false)
			b := &builder{ok: true}
			old := e.sharded(t, "s", hashPlan(3), inPool("gpu"))
			fresh := e.sharded(t, "s2", hashPlan(2), inPool("gpu"))
			e.planned(t, old.ID, 10*time.Second)

			failed := e.failUnserved(t, 5*time.Second, b.build)
			require.Equal(t, []cluster.PoolTimedOut{{ID: old.ID, Name: "s", Pool: "gpu"}}, failed,
				"only the run whose shards waited 5 s since it was planned, named for its metrics")
			r := e.get(t, old.ID)
			require.Equal(t, "failed", r.Status)
			require.Equal(t, string(run.CodePoolUnavailable), r.ErrorCode)
			require.Contains(t, r.ErrorMessage, `pool "gpu" has had no live member for 5s (--pool-wait-timeout-secs)`)
			require.Equal(t, &runs.ShardSummary{Total: 3, Cancelled: 3}, r.Shards, "a shard that never ran is cancelled")
			shards, err := e.s.Shards(e.ctx, old.ID, -1, 10)
			require.NoError(t, err)
			for _, sh := range shards {
				require.Equal(t, string(run.CodePoolUnavailable), sh.ErrorCode, "each shard says why")
			}
			require.Len(t, e.outbox(t), 1, "the run's callback fires")
			require.Len(t, b.seen, 1)
			require.Equal(t, string(run.CodePoolUnavailable), b.seen[0].ErrorCode)

			require.Empty(t, e.failUnserved(t, 5*time.Second, b.build), "a failed run is failed once")
			require.Equal(t, &runs.ShardSummary{Total: 2, Pending: 2}, e.get(t, fresh.ID).Shards)
		},
		"a starved sharded run with a shard still running fails when that shard ends": func(t *testing.T, e *env) {
			e.heartbeat(t, "m-default", []string{"default"}, false)
			b := &builder{ok: true}
			c := e.sharded(t, "s", hashPlan(3), inPool("gpu"))
			running, err := e.s.ClaimShards(e.ctx, e.owner, []string{"gpu"}, 1, longTTL)
			require.NoError(t, err)
			require.Len(t, running, 1)
			e.planned(t, c.ID, 10*time.Second)

			require.Empty(t, e.failUnserved(t, 5*time.Second, b.build), "a shard still runs: the run is not over")
			require.Equal(t, &runs.ShardSummary{Total: 3, Running: 1, Cancelled: 2}, e.get(t, c.ID).Shards)
			require.Equal(t, "failed", e.finishShard(t, running[0], completed(5), b))
			r := e.get(t, c.ID)
			require.Equal(t, string(run.CodePoolUnavailable), r.ErrorCode, "the shards that never ran are why it failed")
			require.Contains(t, r.ErrorMessage, `pool "gpu" has had no live member`)
			require.Equal(t, int64(5), r.Stats.RowsWritten)
		},
		"no wait configured fails nothing": func(t *testing.T, e *env) {
			e.create(t, rec("g", inPool("gpu"), createdAgo(time.Hour)))
			require.Empty(t, e.failUnserved(t, 0, nil))
		},
		"the roster lists members that did not stop, by the database clock": func(t *testing.T, e *env) {
			e.heartbeat(t, "b-legacy", nil, false)
			e.heartbeat(t, "a-none", []string{}, true)
			e.heartbeat(t, "c-gone", []string{"default"}, false)
			require.NoError(t, e.s.MarkStopped(e.ctx, "c-gone"))
			e.age(t, "a-none", time.Minute)
			members, now, err := e.s.Roster(e.ctx)
			require.NoError(t, err)
			require.WithinDuration(t, time.Now(), now, 10*time.Second)
			require.Len(t, members, 2)
			require.Equal(t, "a-none", members[0].InstanceID)
			require.NotNil(t, members[0].Pools, "an empty pool list is not the NULL of a release without pools")
			require.Empty(t, members[0].Pools)
			require.True(t, members[0].Draining)
			require.False(t, members[0].Live(now, poolTTL), "a minute-old heartbeat is not live")
			require.Equal(t, "b-legacy", members[1].InstanceID)
			require.Nil(t, members[1].Pools)
			require.True(t, members[1].Live(now, poolTTL))
			require.Equal(t, "b-legacy:8080", members[1].Listen)
			require.Equal(t, 2, members[1].StateFormatMax)
		},
	}
}
