package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/tests/testdb"
)

func TestPositionalNumbersPlaceholdersOutsideQuotes(t *testing.T) {
	t.Parallel()
	require.Equal(t, "SELECT $1, '?', $2::text WHERE a = $3", positional("SELECT ?, '?', ?::text WHERE a = ?"))
	require.Equal(t, "SELECT 1", positional("SELECT 1"))
}

// The claim and the finish run as prepared statements, whose generic plan PostgreSQL
// picks without seeing the arguments. On a history of a long-lived member's finished
// runs, that plan must still go straight to the rows: the claim down the claim index in id
// order (no sort of every pending run), the finish to its run by id (not through a
// partial index over every running run) and to its key's queued runs only.
func TestGenericPlansOfTheHotStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Postgres(t)
	s, err := Open(ctx, url, Options{PollOnly: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))

	// 20,000 runs the member "m" finished, 2,000 pending ones, and statistics of them.
	cols := strings.Join(runColumns, ", ")
	_, err = s.db.ExecContext(ctx, `INSERT INTO sluice_runs (`+cols+`)
SELECT 'r' || lpad(g::text, 6, '0'), 'p', '', 'default', CASE WHEN g <= 20000 THEN 'completed' ELSE 'pending' END,
  '{}', 'api', NULL, '2026-01-01', 0, FALSE, 0, 1, 3, '[]', CASE WHEN g <= 20000 THEN 'm' END, NULL,
  1, NULL, FALSE, 0, 'x', FALSE, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, NULL, NULL, 0, 0, FALSE,
  g, g, g, CASE WHEN g <= 20000 THEN g END, NULL, 0, NULL, FALSE
FROM generate_series(1, 22000) g`)
	require.NoError(t, err)
	_, err = s.db.ExecContext(ctx, "ANALYZE sluice_runs")
	require.NoError(t, err)

	claim, _, prepare := s.inPools(s.d.claim, []string{"default"})
	require.True(t, prepare)
	plan := genericPlan(ctx, t, s, claim)
	require.Contains(t, plan, "Index Scan using sluice_runs_claim", plan)
	require.NotContains(t, plan, "Sort", plan)

	finish, _ := s.finishStatement("m", cluster.Ref{ID: "r000001", Epoch: 1},
		cluster.Outcome{Status: "completed"}, []logRow{{at: time.Now(), level: "INFO", msg: "done"}}, 1, 4)
	plan = genericPlan(ctx, t, s, finish)
	// The run is found by its id in an index (the key, or status and id), never among
	// all running runs; its key's oldest queued run comes from the queued index.
	require.Regexp(t, `Update on sluice_runs[^\n]*\n\s*->\s*Index Scan using \w+ on sluice_runs [^\n]*\n\s*Index Cond: [^\n]*id = \$18`, plan)
	require.NotContains(t, plan, "sluice_runs_lease", plan)
	require.Contains(t, plan, "using sluice_runs_queued on sluice_runs q", plan)

	// A batch's finish fetches exactly its runs through the primary key (id = ANY), never
	// a scan of the table or of the running runs, and joins them to its items.
	var todo []preparedFinish
	for i, id := range []string{"r000001", "r000002"} {
		f, err := prepareFinish(cluster.Ref{ID: id, Epoch: 1}, cluster.Outcome{Status: "completed",
			Logs: []cluster.LogLine{{Level: "INFO", Message: "done"}}})
		require.NoError(t, err)
		f.index = i
		todo = append(todo, f)
	}
	all, _ := s.finishAllStatement("m", todo, []int{0, 1})
	plan = genericPlan(ctx, t, s, all)
	require.Regexp(t, `Index Scan using sluice_runs_pkey on sluice_runs r[^\n]*\n\s*Index Cond: \(id = ANY`, plan)
	require.NotContains(t, plan, "Seq Scan on sluice_runs", plan)
	require.NotContains(t, plan, "sluice_runs_lease", plan)
	require.Contains(t, plan, "using sluice_runs_queued on sluice_runs q", plan)
}

// genericPlan prepares query (bun's form) as the store would and explains the plan
// PostgreSQL uses when it stops planning per call.
func genericPlan(ctx context.Context, t *testing.T, s *Store, query string) string {
	t.Helper()
	text := positional(s.q(query))
	conn, err := s.db.Conn(ctx)
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	_, err = conn.ExecContext(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "PREPARE hot AS "+text)
	require.NoError(t, err)
	defer func() { _, _ = conn.ExecContext(ctx, "DEALLOCATE hot") }()
	nulls := strings.TrimSuffix(strings.Repeat("NULL, ", strings.Count(text, "$")), ", ")
	rows, err := conn.QueryContext(ctx, fmt.Sprintf("EXPLAIN EXECUTE hot(%s)", nulls))
	require.NoError(t, err)
	defer func() { _ = rows.Close() }()
	var b strings.Builder
	for rows.Next() {
		var line string
		require.NoError(t, rows.Scan(&line))
		b.WriteString(line + "\n")
	}
	require.NoError(t, rows.Err())
	return b.String()
}

// The generic plans checked above are the plans PostgreSQL uses from a statement's first
// call: left to choose, it kept planning the batch finish afresh on every call (its
// generic plan is costed for arrays of unknown length). Under SimpleProtocol (a pooler)
// the store does not ask; a server without the setting (before 12) is not refused.
func TestPreparedStatementsUseTheirGenericPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Postgres(t)
	for _, simple := range []bool{false, true} {
		s, err := Open(ctx, url, Options{PollOnly: true, SimpleProtocol: simple})
		require.NoError(t, err)
		var mode string
		require.NoError(t, s.db.QueryRowContext(ctx, "SHOW plan_cache_mode").Scan(&mode))
		require.NoError(t, s.Close())
		if simple {
			require.NotEqual(t, "force_generic_plan", mode)
			continue
		}
		require.Equal(t, "force_generic_plan", mode)
	}
}

// A server that does not know a setting (PostgreSQL before 12 has no plan_cache_mode)
// still connects; a bad value of a known setting is still an error.
func TestSetIfKnownSkipsSettingsTheServerLacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testdb.Postgres(t))
	require.NoError(t, err)
	defer func() { _ = conn.Close(ctx) }()
	require.NoError(t, setIfKnown(ctx, conn, "SET sluice_no_such_setting = 1"))
	require.Error(t, setIfKnown(ctx, conn, "SET plan_cache_mode = sometimes"))
	require.NoError(t, setIfKnown(ctx, conn, "SET plan_cache_mode = force_generic_plan"))
	var mode string
	require.NoError(t, conn.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&mode))
	require.Equal(t, "force_generic_plan", mode)
}
