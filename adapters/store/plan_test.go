package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/tests/testdb"
)

// planRows is how many runs the plan test loads: enough that PostgreSQL prefers an index
// range to a scan when one fits, few enough to load in a second or two.
const planRows = 100_000

// captured keeps the statements a store runs, so the test can EXPLAIN exactly the SQL
// List and Purge send.
type captured struct {
	mu      sync.Mutex
	queries []string
}

func (c *captured) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (c *captured) AfterQuery(_ context.Context, ev *bun.QueryEvent) {
	c.mu.Lock()
	c.queries = append(c.queries, ev.Query)
	c.mu.Unlock()
}

// last returns the last statement starting with prefix.
func (c *captured) last(t *testing.T, prefix string) string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.queries) - 1; i >= 0; i-- {
		if strings.HasPrefix(c.queries[i], prefix) {
			return c.queries[i]
		}
	}
	require.FailNow(t, "statement not sent", prefix)
	return ""
}

// TestPostgresPlansUseTheScaleIndexes loads a history where the filters are selective and
// checks that the list filters and the tick purge are index ranges (SPEC §14.9).
func TestPostgresPlansUseTheScaleIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &captured{}
	s, err := store.Open(ctx, testdb.Postgres(t), store.Options{QueryHook: hook, SimpleProtocol: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))
	db := s.DB()
	// 50 tenants x 20 pipelines; 1 run in 100 failed, the rest completed; run i is
	// created at second i and its id is a UUIDv7 of that time, as the run service makes.
	_, err = db.ExecContext(ctx, `INSERT INTO sluice_runs (id, name, tenant, pool, status, trigger_kind,
  run_date, logical_at, max_attempts, config, created_at, finished_at)
SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(i), 12, '0'),
  'p' || (i % 20), 't' || (i % 50), 'default',
  CASE WHEN i % 100 = 7 THEN 'failed' ELSE 'completed' END, 'api', '2026-01-01', i, 3, 'x', i * 1000, i
FROM generate_series(1, ?) AS i, lpad(to_hex(i * 1000), 12, '0') AS h`, planRows)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO sluice_run_labels (run_id, key, value)
SELECT id, 'team', 'team-' || (created_at / 1000 % 20) FROM sluice_runs`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO sluice_schedules (id, template_id, cron, timezone, overlap_policy,
  params, labels, created_by, created_at, updated_at)
SELECT 's' || i, 'tpl', '* * * * *', 'UTC', 'skip', '{}', '{}', 'admin', 0, 0 FROM generate_series(1, 100) AS i`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO sluice_schedule_ticks (schedule_id, instant, status, epoch, created_at)
SELECT 's' || (i % 100 + 1), i, 'created', 1, i FROM generate_series(1, ?) AS i`, planRows)
	require.NoError(t, err)
	for _, table := range []string{"sluice_runs", "sluice_run_labels", "sluice_schedule_ticks"} {
		_, err = db.ExecContext(ctx, "ANALYZE "+table)
		require.NoError(t, err)
	}
	explain := func(query string) string {
		var lines []string
		require.NoError(t, db.NewRaw("EXPLAIN "+query).Scan(ctx, &lines))
		return strings.Join(lines, "\n")
	}

	cases := []struct {
		filter runs.Filter
		index  string
	}{
		{runs.Filter{Tenant: "t7", Status: []string{"failed"}}, "sluice_runs_tenant_status"},
		{runs.Filter{Tenant: "t7", Name: "p7"}, "sluice_runs_tenant_name"},
		{runs.Filter{Tenant: "t7", TenantSet: true}, "sluice_runs_tenant_id"},
		{runs.Filter{Labels: map[string]string{"team": "team-3"}}, "sluice_run_labels_kv_run"},
		{runs.Filter{Labels: map[string]string{"team": "no-such-team"}}, "sluice_run_labels_kv_run"},
	}
	for _, c := range cases {
		_, err := s.List(ctx, c.filter)
		require.NoError(t, err)
		plan := explain(hook.last(t, "SELECT"))
		require.Contains(t, plan, c.index, "%+v:\n%s", c.filter, plan)
	}

	// Admission looks up a key's active runs: a serial run's create and the sweep for
	// queued runs nobody promoted. Both read the index of runs in flight, whatever the
	// key's history of finished runs (1,000 each here).
	serial := newRun("p7")
	serial.Tenant, serial.Serial = "t7", true
	_, err = s.Create(ctx, serial, nil)
	require.NoError(t, err)
	plan := explain(hook.last(t, "SELECT COALESCE(SUM(CASE WHEN status = 'queued'"))
	require.Contains(t, plan, "sluice_runs_active", plan)
	_, err = s.Reclaim(ctx, nil)
	require.NoError(t, err)
	plan = explain(hook.last(t, "SELECT DISTINCT q.tenant"))
	require.Contains(t, plan, "sluice_runs_active", plan)
	_, err = db.ExecContext(ctx, "DELETE FROM sluice_runs WHERE id = ?", serial.ID)
	require.NoError(t, err)

	// A time window (an hour of a day's runs) is a range of the primary key: the index
	// condition bounds id, where a walk of every newer run would only filter created_at.
	window := runs.Filter{Since: time.UnixMilli(50_000_000), Until: time.UnixMilli(53_600_000)}
	page, err := s.List(ctx, window)
	require.NoError(t, err)
	require.Len(t, page, store.DefaultListLimit)
	require.Equal(t, time.UnixMilli(53_599_000).UTC(), page[0].CreatedAt.UTC(), "newest run of the window first")
	plan = explain(hook.last(t, "SELECT"))
	require.Contains(t, plan, "sluice_runs_pkey", plan)
	require.Regexp(t, `Index Cond: \(\(id >= .*\) AND \(id < `, plan)

	// The first 50 ticks are past the cutoff; only they may be read, not the whole table.
	res, err := s.Purge(ctx, runs.PurgeRequest{RunsBefore: time.UnixMilli(50), BatchSize: 10})
	require.NoError(t, err)
	require.Equal(t, 49, res.Runs, "runs 1 to 49 finished before the cutoff")
	plan = explain(hook.last(t, "DELETE FROM sluice_schedule_ticks"))
	require.Contains(t, plan, "sluice_schedule_ticks_created", plan)
	require.NotContains(t, plan, "Seq Scan on sluice_schedule_ticks t", plan)
	plan = explain(hook.last(t, "DELETE FROM sluice_runs "))
	require.Contains(t, plan, "sluice_runs_finished", plan)
}

// TestSQLitePlansUseTheScaleIndexes checks the SQLite plans of the list filters a
// tenant and a label make: each is a backward walk of an index that also orders by id,
// with no sort of every matching run (a "TEMP B-TREE FOR ORDER BY").
func TestSQLitePlansUseTheScaleIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hook := &captured{}
	s, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "plans.db"), store.Options{QueryHook: hook})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))
	db := s.DB()
	_, err = db.ExecContext(ctx, `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?)
INSERT INTO sluice_runs (id, name, tenant, pool, status, trigger_kind, run_date, logical_at, max_attempts, config,
  created_at, finished_at)
SELECT printf('%08x-%04x-7000-8000-%012x', i * 1000 / 65536, i * 1000 % 65536, i), 'p' || (i % 20), 't' || (i % 50),
  'default', CASE WHEN i % 100 = 7 THEN 'failed' ELSE 'completed' END, 'api', '2026-01-01', i, 3, 'x', i * 1000, i
FROM g`, planRows/10)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO sluice_run_labels (run_id, key, value)
SELECT id, 'team', 'team-' || (created_at / 1000 % 20) FROM sluice_runs`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "ANALYZE")
	require.NoError(t, err)

	cases := []struct {
		filter runs.Filter
		index  string
	}{
		{runs.Filter{Tenant: "t7", TenantSet: true}, "sluice_runs_tenant_id"},
		{runs.Filter{Name: "p7"}, "sluice_runs_name_id"},
		{runs.Filter{Tenant: "t7", Name: "p7"}, "sluice_runs_tenant_name"},
		{runs.Filter{Tenant: "t7", Status: []string{"failed"}}, "sluice_runs_tenant_status"},
		{runs.Filter{Labels: map[string]string{"team": "team-3"}}, "sluice_run_labels_kv_run"},
	}
	for _, c := range cases {
		page, err := s.List(ctx, c.filter)
		require.NoError(t, err)
		require.NotEmpty(t, page)
		var rows []struct {
			ID, Parent, Unused int
			Detail             string
		}
		require.NoError(t, db.NewRaw("EXPLAIN QUERY PLAN "+hook.last(t, "SELECT")).Scan(ctx, &rows))
		var plan []string
		for _, r := range rows {
			plan = append(plan, r.Detail)
		}
		text := strings.Join(plan, "\n")
		require.Contains(t, text, c.index, "%+v:\n%s", c.filter, text)
		require.NotContains(t, text, "TEMP B-TREE", "%+v:\n%s", c.filter, text)
	}
}
