package storecontract

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/runs"
)

// purgeBefore purges runs, ticks, members and idempotency keys older than at, in the
// default batches.
func purgeBefore(at time.Time) runs.PurgeRequest {
	return runs.PurgeRequest{RunsBefore: at, IdempotencyBefore: at}
}

// cancelled creates n runs of name and cancels them: n terminal runs finished now, each
// with a label and two log lines.
func (e *env) cancelled(t *testing.T, name string, n int) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for range n {
		r := e.create(t, rec(name, func(r *runs.Record) { r.Labels = map[string]string{"batch": name} }))
		require.NoError(t, e.s.AppendLogs(e.ctx, r.ID, logLines(2, "x")))
		_, ok, err := e.s.CancelQueued(e.ctx, r.ID, nil)
		require.NoError(t, err)
		require.True(t, ok)
		ids = append(ids, r.ID)
	}
	return ids
}

// childRows counts the rows of table that belong to the runs ids.
func (e *env) childRows(t *testing.T, table string, ids []string) int {
	t.Helper()
	var n int
	require.NoError(t, e.s.DB().NewRaw("SELECT count(*) FROM "+table+" WHERE run_id IN (?)", bun.In(ids)).Scan(e.ctx, &n))
	return n
}

// tap calls fn for every statement the env's store runs (BEGIN and COMMIT included),
// until the returned stop is called.
func (e *env) tap(fn func(*bun.QueryEvent)) (stop func()) {
	e.hook.mu.Lock()
	e.hook.tap = fn
	e.hook.mu.Unlock()
	return func() {
		e.hook.mu.Lock()
		e.hook.tap = nil
		e.hook.mu.Unlock()
	}
}

func isRunDelete(ev *bun.QueryEvent) bool {
	return strings.HasPrefix(ev.Query, "DELETE FROM sluice_runs ")
}

func purgeCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a batched purge removes runs with their labels, logs and shards": func(t *testing.T, e *env) {
			old := e.cancelled(t, "p", 5)
			c := e.sharded(t, "s", keyPlan(2))
			b := &builder{}
			for _, sh := range e.claimShards(t, 2, longTTL) {
				e.finishShard(t, sh, completed(1), b)
			}
			require.Equal(t, "completed", e.get(t, c.ID).Status)
			old = append(old, c.ID)
			keep := e.create(t, rec("p", func(r *runs.Record) { r.Labels = map[string]string{"batch": "p"} }))
			require.NoError(t, e.s.AppendLogs(e.ctx, keep.ID, logLines(1, "x")))
			require.Equal(t, 10, e.childRows(t, "sluice_run_logs", old[:5]))
			require.Equal(t, 2, e.childRows(t, "sluice_shards", old[5:]))

			req := purgeBefore(time.Now().Add(time.Hour))
			req.BatchSize = 2
			res, err := e.s.Purge(e.ctx, req)
			require.NoError(t, err)
			require.Equal(t, 6, res.Runs)
			require.False(t, res.Skipped)
			for _, table := range []string{"sluice_run_labels", "sluice_run_logs", "sluice_shards", "sluice_sealed_secrets"} {
				require.Zero(t, e.childRows(t, table, old), "%s of purged runs go with them", table)
			}
			require.Equal(t, "pending", e.get(t, keep.ID).Status, "active runs stay")
			require.Equal(t, 1, e.childRows(t, "sluice_run_labels", []string{keep.ID}))
			require.Equal(t, 1, e.childRows(t, "sluice_run_logs", []string{keep.ID}))
		},
		"each purge transaction deletes at most the batch size of runs": func(t *testing.T, e *env) {
			e.cancelled(t, "p", 10)
			var (
				mu      sync.Mutex
				deletes []int64 // rows of each run DELETE, in order
				open    bool    // a run DELETE not yet followed by COMMIT
				shared  int     // run DELETEs that ran in a transaction with an earlier one
			)
			stop := e.tap(func(ev *bun.QueryEvent) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case strings.EqualFold(ev.Operation(), "COMMIT"):
					open = false
				case isRunDelete(ev) && ev.Err == nil:
					n, err := ev.Result.RowsAffected()
					require.NoError(t, err)
					deletes = append(deletes, n)
					if open {
						shared++
					}
					open = true
				}
			})
			req := purgeBefore(time.Now().Add(time.Hour))
			req.BatchSize = 3
			res, err := e.s.Purge(e.ctx, req)
			stop()
			require.NoError(t, err)
			require.Equal(t, 10, res.Runs)
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, []int64{3, 3, 3, 1}, deletes, "10 runs in batches of 3: four transactions")
			require.Zero(t, shared, "every batch commits before the next starts")
			require.False(t, open, "the last batch committed")
		},
		"audit entries and ended leader terms past their retention are purged": func(t *testing.T, e *env) {
			now := time.Now()
			for _, at := range []time.Time{now.Add(-3 * time.Hour), now.Add(-2 * time.Hour), now} {
				require.NoError(t, e.s.Audit(e.ctx, runs.AuditEntry{At: at, Actor: "admin", Action: "runs.cancelled"}))
			}
			first := e.term(t)
			second := e.term(t)
			require.Greater(t, second.Epoch(), first.Epoch())

			res, err := e.s.Purge(e.ctx, runs.PurgeRequest{AuditBefore: now.Add(-time.Hour), BatchSize: 1})
			require.NoError(t, err)
			require.Equal(t, 2, res.Audit)
			left, err := e.s.ListAudit(e.ctx, 0, 10)
			require.NoError(t, err)
			require.Len(t, left, 1)
			require.WithinDuration(t, now, left[0].At, time.Second)
			leaders, err := e.s.Leaders(e.ctx)
			require.NoError(t, err)
			require.Len(t, leaders, 2, "both terms are younger than the retention")

			_, err = e.s.Purge(e.ctx, runs.PurgeRequest{AuditBefore: now.Add(time.Hour)})
			require.NoError(t, err)
			leaders, err = e.s.Leaders(e.ctx)
			require.NoError(t, err)
			require.Len(t, leaders, 1, "the newest term stays however old")
			require.Equal(t, second.Epoch(), leaders[0].Epoch)
		},
		"one store purges a history at a time": func(t *testing.T, e *env) {
			ids := e.cancelled(t, "p", 3)
			if !e.h.Shared {
				res, err := e.s.Purge(e.ctx, purgeBefore(time.Now().Add(time.Hour)))
				require.NoError(t, err)
				require.Equal(t, runs.PurgeResult{Runs: 3}, res, "a private history has nobody to wait for")
				return
			}
			entered, resume := make(chan struct{}), make(chan struct{})
			var once sync.Once
			stop := e.tap(func(ev *bun.QueryEvent) {
				if isRunDelete(ev) {
					once.Do(func() { close(entered); <-resume })
				}
			})
			defer stop()
			done := make(chan runs.PurgeResult, 1)
			go func() {
				res, err := e.s.Purge(e.ctx, purgeBefore(time.Now().Add(time.Hour)))
				assertNoError(t, err)
				done <- res
			}()
			<-entered
			other := e.open(t, store.Options{})
			res, err := other.Purge(e.ctx, purgeBefore(time.Now().Add(time.Hour)))
			require.NoError(t, err)
			require.Equal(t, runs.PurgeResult{Skipped: true}, res, "a second purge of the history skips its pass")
			close(resume)
			require.Equal(t, runs.PurgeResult{Runs: 3}, <-done)
			require.Zero(t, e.childRows(t, "sluice_run_labels", ids))

			res, err = other.Purge(e.ctx, purgeBefore(time.Now().Add(time.Hour)))
			require.NoError(t, err)
			require.False(t, res.Skipped, "the lock is free again once the purge is done")
		},
	}
}
