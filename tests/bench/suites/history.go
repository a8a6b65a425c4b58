package suites

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/tests/bench/harness"
)

// historyLogLines is how many log lines each loaded run has (the 200k runs with
// 2M lines).
const historyLogLines = 10

// History measures the purge of a large backlog: --rows expired runs (each with a label
// and historyLogLines log lines) purged in batches while a member renews a lease.
func History() harness.Suite {
	return harness.Suite{
		Name: "history",
		Description: "the purge of --rows expired runs with their labels and logs on SQLite and PostgreSQL " +
			"(the PostgreSQL row needs a PostgreSQL URL): total time, transactions, the longest transaction " +
			"and the longest wait of a lease renewal running meanwhile",
		Table: measureHistory,
	}
}

func measureHistory(ctx context.Context, env *harness.Env) (harness.Table, error) {
	pgBase, pgErr := lookupURL(EnvBenchPostgres, envTestPostgres)
	kinds := []string{"sqlite"}
	if pgErr == nil {
		kinds = append(kinds, "postgres")
	}
	var rows [][]string
	for _, kind := range kinds {
		row, err := measurePurge(ctx, env, kind, pgBase)
		if err != nil {
			return harness.Table{}, fmt.Errorf("%s purge: %w", kind, err)
		}
		rows = append(rows, row)
	}
	if pgErr != nil {
		rows = append(rows, []string{"postgres", "—", "—", "—", "—", "—", "not measured: " + pgErr.Error()})
	}
	env.Note("Each run is terminal, finished a day ago, with 1 label and %d log lines, loaded by SQL outside the timing. "+
		"The purge is `Store.Purge` with the default batch (%d runs per transaction on PostgreSQL, 1,000 on SQLite); longest tx = BEGIN to COMMIT of "+
		"one run batch. A second store on the same history renews the lease of one running run every 50 ms meanwhile; "+
		"renewal max = the slowest of those statements.", historyLogLines, runs.MaxPurgeBatch)
	return harness.Table{
		Columns: []string{"history", "runs", "purge total", "transactions", "longest tx", "renewal max", "note"},
		Rows:    rows,
	}, nil
}

func measurePurge(ctx context.Context, env *harness.Env, kind, pgBase string) ([]string, error) {
	url, drop := "sqlite:"+filepath.Join(env.Dir, "history-purge.db"), func() {}
	if kind == "postgres" {
		var err error
		if url, drop, err = serveSchema(ctx, pgBase); err != nil {
			return nil, err
		}
	}
	defer drop()
	txs := &txTimer{}
	st, err := store.Open(ctx, url, store.Options{QueryHook: txs})
	if err != nil {
		return nil, fmt.Errorf("open the history: %w", err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	env.Progress("history %s: loading %d expired runs with %d log lines each", kind, env.Rows, historyLogLines)
	if err := loadExpired(ctx, st.DB(), env.Rows); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	member, err := store.Open(ctx, url, store.Options{})
	if err != nil {
		return nil, err
	}
	defer member.Close()
	renew, err := startRenewals(ctx, member)
	if err != nil {
		return nil, err
	}
	env.Progress("history %s: purging", kind)
	txs.reset()
	start := time.Now()
	res, err := st.Purge(ctx, runs.PurgeRequest{RunsBefore: time.Now().Add(-time.Hour), IdempotencyBefore: time.Now()})
	total := time.Since(start)
	worst, rerr := renew()
	if err != nil {
		return nil, err
	}
	if rerr != nil {
		return nil, fmt.Errorf("lease renewal during the purge: %w", rerr)
	}
	if int64(res.Runs) != env.Rows {
		return nil, fmt.Errorf("purged %d runs, want %d", res.Runs, env.Rows)
	}
	n, longest := txs.result()
	return []string{kind, fmt.Sprint(res.Runs), total.Round(time.Millisecond).String(), fmt.Sprint(n),
		longest.Round(time.Millisecond).String(), worst.Round(time.Millisecond).String(), ""}, nil
}

// loadExpired inserts n terminal runs finished a day ago, each with a label and
// historyLogLines log lines, in chunks so neither database builds one huge statement.
func loadExpired(ctx context.Context, db *bun.DB, n int64) error {
	const chunk = 20_000
	finished := time.Now().Add(-24 * time.Hour).UnixMilli()
	for from := int64(0); from < n; from += chunk {
		to := min(from+chunk, n)
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			series := `WITH RECURSIVE s(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?) `
			if _, err := tx.ExecContext(ctx, series+`INSERT INTO sluice_runs (id, name, pool, status, trigger_kind,
  run_date, logical_at, max_attempts, config, created_at, finished_at)
SELECT 'expired-' || i, 'p', 'default', 'completed', 'api', '2026-01-01', ?, 3, 'x', ?, ?
FROM s`, from, to, finished, finished, finished); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, series+`INSERT INTO sluice_run_labels (run_id, key, value)
SELECT 'expired-' || i, 'team', 'x' FROM s`, from, to); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, series+`, l(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM l WHERE seq < ?)
INSERT INTO sluice_run_logs (run_id, seq, at, level, message)
SELECT 'expired-' || i, seq, ?, 'INFO', 'page written' FROM s, l`,
				from, to, historyLogLines, finished)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// startRenewals claims one run on member and renews its lease every 50 ms until the
// returned stop is called, which answers the slowest renewal.
func startRenewals(ctx context.Context, member *store.Store) (stop func() (time.Duration, error), err error) {
	rec := &runs.Record{ID: uuid.Must(uuid.NewV7()).String(), Name: "held", Pool: "default", Status: "pending",
		TriggerKind: "api", RunDate: "2026-01-01", LogicalAt: time.Now(), MaxAttempts: 3, Config: "x", CreatedAt: time.Now()}
	if _, err := member.Create(ctx, rec, nil); err != nil {
		return nil, err
	}
	owner := cluster.Owner{InstanceID: "bench-member", Listen: "127.0.0.1:1"}
	claimed, err := member.Claim(ctx, owner, []string{"default"}, 1, time.Minute)
	if err != nil || len(claimed) != 1 {
		return nil, fmt.Errorf("claim the held run: %v (%d claimed)", err, len(claimed))
	}
	ref := []cluster.Ref{{ID: claimed[0].ID, Epoch: claimed[0].Epoch}}
	done, out := make(chan struct{}), make(chan error, 1)
	var worst time.Duration
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				out <- nil
				return
			case <-t.C:
			}
			start := time.Now()
			if _, err := member.Renew(ctx, owner.InstanceID, ref, time.Minute); err != nil {
				out <- err
				return
			}
			worst = max(worst, time.Since(start))
		}
	}()
	return func() (time.Duration, error) {
		close(done)
		err := <-out
		return worst, err
	}, nil
}

// txTimer is a bun.QueryHook timing each transaction from BEGIN to COMMIT. The purge is
// the only writer on its store, so transactions never overlap there.
type txTimer struct {
	mu      sync.Mutex
	began   time.Time
	n       int
	longest time.Duration
}

func (x *txTimer) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (x *txTimer) AfterQuery(_ context.Context, ev *bun.QueryEvent) {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch ev.Operation() {
	case "BEGIN":
		x.began = ev.StartTime
	case "COMMIT":
		x.n++
		x.longest = max(x.longest, time.Since(x.began))
	}
}

func (x *txTimer) reset() {
	x.mu.Lock()
	x.n, x.longest = 0, 0
	x.mu.Unlock()
}

func (x *txTimer) result() (int, time.Duration) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.n, x.longest
}
