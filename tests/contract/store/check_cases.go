package storecontract

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

// refusal is one write that breaks an invariant, and the CHECK constraint that must
// refuse it.
type refusal struct {
	name, constraint, stmt string
	args                   []any
}

// refuseAll runs each write and requires that the database refused it naming its
// constraint and that the row reads as before (snapshot renders it).
func (e *env) refuseAll(t *testing.T, cases []refusal, snapshot func() any) {
	t.Helper()
	before := snapshot()
	for _, c := range cases {
		_, err := e.s.DB().ExecContext(e.ctx, c.stmt, c.args...)
		require.Error(t, err, c.name)
		require.ErrorContains(t, err, c.constraint, c.name)
		require.Equal(t, before, snapshot(), "%s: the refused write changed the row", c.name)
	}
}

// rowText reads one row of table (every column, as text) for before/after comparisons.
func (e *env) rowText(t *testing.T, query string, args ...any) any {
	t.Helper()
	var out []map[string]any
	require.NoError(t, e.s.DB().NewRaw(query, args...).Scan(e.ctx, &out))
	require.Len(t, out, 1)
	return out[0]
}

func checkCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a run write breaking a status or invariant is refused": func(t *testing.T, e *env) {
			pending := e.create(t, rec("checks", func(r *runs.Record) { r.Pool = "idle" })).ID
			running := e.claimOne(t, "checks-running", longTTL).ID
			cases := []refusal{
				{"unknown status", "sluice_runs_status_check", "UPDATE sluice_runs SET status = 'done' WHERE id = ?", []any{pending}},
				{"terminal without finished_at", "sluice_runs_finished_check", "UPDATE sluice_runs SET status = 'completed' WHERE id = ?", []any{pending}},
				{"finished_at on an active run", "sluice_runs_finished_check", "UPDATE sluice_runs SET finished_at = 1 WHERE id = ?", []any{pending}},
				{"running without an owner", "sluice_runs_running_check", "UPDATE sluice_runs SET status = 'running', lease_expires_at = 1 WHERE id = ?", []any{pending}},
				{"owner and lease on a pending run", "sluice_runs_running_check", "UPDATE sluice_runs SET owner = 'x', lease_expires_at = 1 WHERE id = ?", []any{pending}},
				{"negative attempt", "sluice_runs_attempt_check", "UPDATE sluice_runs SET attempt = -1 WHERE id = ?", []any{pending}},
				{"no attempts allowed", "sluice_runs_max_attempts_check", "UPDATE sluice_runs SET max_attempts = 0 WHERE id = ?", []any{pending}},
			}
			e.refuseAll(t, cases, func() any { return e.rowText(t, "SELECT * FROM sluice_runs WHERE id = ?", pending) })
			e.refuseAll(t, []refusal{
				{"running losing its lease", "sluice_runs_running_check", "UPDATE sluice_runs SET lease_expires_at = NULL WHERE id = ?", []any{running}},
				{"running losing its owner", "sluice_runs_running_check", "UPDATE sluice_runs SET owner = NULL WHERE id = ?", []any{running}},
				{"terminal but still owned", "sluice_runs_running_check", "UPDATE sluice_runs SET status = 'failed', finished_at = 1 WHERE id = ?", []any{running}},
			}, func() any { return e.rowText(t, "SELECT * FROM sluice_runs WHERE id = ?", running) })
			_, err := e.s.DB().ExecContext(e.ctx, `INSERT INTO sluice_runs (id, name, pool, status, trigger_kind, run_date,
  logical_at, max_attempts, config, created_at) VALUES ('bad', 'n', 'default', 'pending', 'api', '2026-01-01', 1, 0, 'c', 1)`)
			require.ErrorContains(t, err, "sluice_runs_max_attempts_check")
		},
		"a shard write breaking a status or invariant is refused": func(t *testing.T, e *env) {
			parent := e.sharded(t, "checks-shards", keyPlan(2)).ID
			claimed := e.claimShards(t, 1, longTTL)
			require.Len(t, claimed, 1)
			idle := 1 - claimed[0].Ref.Index
			where := " WHERE run_id = ? AND shard_index = ?"
			e.refuseAll(t, []refusal{
				{"unknown status", "sluice_shards_status_check", "UPDATE sluice_shards SET status = 'sharded'" + where, []any{parent, idle}},
				{"terminal without finished_at", "sluice_shards_finished_check", "UPDATE sluice_shards SET status = 'completed'" + where, []any{parent, idle}},
				{"running without an owner", "sluice_shards_running_check", "UPDATE sluice_shards SET status = 'running', lease_expires_at = 1" + where, []any{parent, idle}},
				{"negative attempt", "sluice_shards_attempt_check", "UPDATE sluice_shards SET attempt = -1" + where, []any{parent, idle}},
				{"no attempts allowed", "sluice_shards_max_attempts_check", "UPDATE sluice_shards SET max_attempts = 0" + where, []any{parent, idle}},
			}, func() any { return e.rowText(t, "SELECT * FROM sluice_shards"+where, parent, idle) })
			e.refuseAll(t, []refusal{
				{"running losing its lease", "sluice_shards_running_check", "UPDATE sluice_shards SET lease_expires_at = NULL" + where, []any{parent, claimed[0].Ref.Index}},
			}, func() any { return e.rowText(t, "SELECT * FROM sluice_shards"+where, parent, claimed[0].Ref.Index) })
		},
		"a tick or change request with an unknown status is refused": func(t *testing.T, e *env) {
			sc := e.schedule(t, "checks-ticks")
			_, err := e.s.DB().ExecContext(e.ctx, `INSERT INTO sluice_schedule_ticks (schedule_id, instant, status, epoch, created_at)
VALUES (?, 1, 'created', 1, 1)`, sc.ID)
			require.NoError(t, err)
			e.refuseAll(t, []refusal{
				{"unknown tick status", "sluice_schedule_ticks_status_check",
					"UPDATE sluice_schedule_ticks SET status = 'late' WHERE schedule_id = ? AND instant = 1", []any{sc.ID}},
			}, func() any {
				return e.rowText(t, "SELECT * FROM sluice_schedule_ticks WHERE schedule_id = ? AND instant = 1", sc.ID)
			})
			_, err = e.s.DB().ExecContext(e.ctx, `INSERT INTO sluice_change_requests (id, proposer, name, pool, trigger_kind,
  request, status, created_at, expires_at) VALUES ('cr-1', 'alice', 'n', 'default', 'api', '{}', 'proposed', 1, 2)`)
			require.NoError(t, err)
			e.refuseAll(t, []refusal{
				{"unknown change request status", "sluice_change_requests_status_check",
					"UPDATE sluice_change_requests SET status = 'withdrawn' WHERE id = 'cr-1'", nil},
			}, func() any { return e.rowText(t, "SELECT * FROM sluice_change_requests WHERE id = 'cr-1'") })
		},
	}
}
