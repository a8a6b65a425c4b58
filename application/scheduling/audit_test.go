package scheduling_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
)

// Creating, pausing, resuming and deleting a schedule and posting a backfill each
// write an audit entry naming the principal and what changed; params never appear.
func TestScheduleChangesAreAudited(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	w.template(t, "orders", windowParams)
	operator := runs.Principal{Name: "otto", Role: runs.Operator}
	params := map[string]string{"table": "very-private-table"}

	v, err := w.svc.Create(w.ctx, admin, scheduling.CreateRequest{TemplateID: "orders", Cron: "@daily", Params: params})
	require.NoError(t, err)
	_, err = w.svc.Pause(w.ctx, operator, v.ID)
	require.NoError(t, err)
	_, err = w.svc.Resume(w.ctx, operator, v.ID)
	require.NoError(t, err)
	require.NoError(t, w.svc.Delete(w.ctx, admin, v.ID))
	bf, err := w.svc.Backfill(w.ctx, operator, scheduling.BackfillRequest{Template: "orders", Params: params,
		From: day(1), To: day(3), Window: "P1D"})
	require.NoError(t, err)
	_, err = w.svc.Backfill(w.ctx, operator, scheduling.BackfillRequest{Template: "orders", Params: params,
		From: day(1), To: day(3), Window: "P1D"})
	require.NoError(t, err)

	// Refused calls change nothing and are not audited.
	_, err = w.svc.Pause(w.ctx, runs.Principal{Name: "vic", Role: runs.Viewer}, v.ID)
	require.ErrorIs(t, err, runs.ErrForbidden)
	require.Error(t, w.svc.Delete(w.ctx, admin, v.ID), "deleted already")

	all, err := w.st.ListAudit(w.ctx, 0, 1000)
	require.NoError(t, err)
	var got []runs.AuditEntry
	for _, e := range all {
		if e.Action != runs.ActionSubmitted {
			got = append(got, e)
		}
		raw, err := json.Marshal(e.Details)
		require.NoError(t, err)
		require.NotContains(t, string(raw), "very-private-table", e.Action)
	}
	require.Len(t, got, 6)
	want := []struct{ action, actor string }{
		{scheduling.ActionScheduleCreated, "ann"}, {scheduling.ActionSchedulePaused, "otto"},
		{scheduling.ActionScheduleResumed, "otto"}, {scheduling.ActionScheduleDeleted, "ann"},
		{scheduling.ActionBackfillPosted, "otto"}, {scheduling.ActionBackfillPosted, "otto"},
	}
	for i, wnt := range want {
		require.Equal(t, wnt.action, got[i].Action, i)
		require.Equal(t, wnt.actor, got[i].Actor, i)
		require.Empty(t, got[i].RunID)
	}
	for _, e := range got[:4] {
		require.Equal(t, v.ID, e.Details["schedule_id"])
		require.Equal(t, "orders", e.Details["template_id"])
		require.Equal(t, "@daily", e.Details["cron"])
	}
	require.Equal(t, true, got[1].Details["paused"])
	require.Equal(t, false, got[2].Details["paused"])
	first, again := got[4].Details, got[5].Details
	require.Equal(t, bf.ID, first["backfill_id"])
	require.Equal(t, "orders", first["template_id"])
	require.Equal(t, "P1D", first["window"])
	require.EqualValues(t, 2, first["windows"])
	require.EqualValues(t, 2, first["runs_created"])
	require.EqualValues(t, 0, again["runs_created"], "a re-post creates nothing")
}
