package scheduling_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
)

const windowParams = `params:
  table: { type: string, required: true }
`

func day(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }

// A backfill makes one run per window with its bounds bound in; posting it again
// creates nothing new; max_active holds the rest queued.
func TestBackfillWindowsOnce(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(day(20))
	w.template(t, "orders", windowParams)
	operator := runs.Principal{Name: "otto", Role: runs.Operator}
	req := scheduling.BackfillRequest{Template: "orders", Params: map[string]string{"table": "t1"},
		From: day(1), To: day(4), Window: "P1D"}
	first, err := w.svc.Backfill(w.ctx, operator, req)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(first.ID, "bf-"))
	require.Len(t, first.Runs, 3)
	statuses := []string{}
	for i, r := range first.Runs {
		require.False(t, r.Replayed)
		require.True(t, day(i+1).Equal(r.Start))
		require.True(t, day(i+2).Equal(r.End))
		rec, err := w.st.Get(w.ctx, r.RunID)
		require.NoError(t, err)
		require.Equal(t, "backfill", rec.TriggerKind)
		require.Equal(t, "backfill:"+day(i+1).Format("2006-01-02T15:04:05Z"), rec.RunKey)
		require.Equal(t, day(i+1).Format(time.DateOnly), rec.RunDate, "the logical instant is the window's start")
		require.Equal(t, first.ID, rec.Labels[scheduling.BackfillLabel])
		statuses = append(statuses, rec.Status)
	}
	require.Equal(t, []string{"pending", "queued", "queued"}, statuses, "max_active 1 by default")

	again, err := w.svc.Backfill(w.ctx, operator, req)
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID)
	for i, r := range again.Runs {
		require.True(t, r.Replayed, "window %d exists already", i)
		require.Equal(t, first.Runs[i].RunID, r.RunID)
	}
	list, err := w.st.List(w.ctx, runs.Filter{Limit: 100})
	require.NoError(t, err)
	require.Len(t, list, 3, "nothing new was created")

	// A config with the window's bounds: they are bound into the stored config.
	two := 2
	cfg := `version: 1
name: events
pipeline:
  source: { type: generate, config: { count: 1 } }
  sink: { type: sqlite, config: { connection_url: "sqlite:` + w.dir + `/events.db", table_name: "ev_${backfill.start}_${backfill.end}", write_mode: append, create_table: true } }
`
	bf, err := w.svc.Backfill(w.ctx, operator, scheduling.BackfillRequest{Config: []byte(cfg), From: day(1), To: day(1).Add(18 * time.Hour),
		Window: "PT6H", MaxActive: &two, Timezone: "Europe/Berlin"})
	require.NoError(t, err)
	require.Len(t, bf.Runs, 3)
	var pending int
	for _, r := range bf.Runs {
		rec, err := w.st.Get(w.ctx, r.RunID)
		require.NoError(t, err)
		require.NotContains(t, rec.Config, "${backfill")
		require.Contains(t, rec.Config, "ev_"+r.Start.UTC().Format(time.RFC3339)+"_"+r.End.UTC().Format(time.RFC3339))
		if rec.Status == "pending" {
			pending++
		}
	}
	require.Equal(t, 2, pending, "max_active 2")
}

func TestBackfillRefusals(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.template(t, "orders", windowParams)
	operator := runs.Principal{Name: "otto", Role: runs.Operator}
	ok := func() scheduling.BackfillRequest {
		return scheduling.BackfillRequest{Template: "orders", Params: map[string]string{"table": "t"}, From: day(1), To: day(3), Window: "P1D"}
	}
	n := func(v int) *int { return &v }
	for name, tc := range map[string]struct {
		mod   func(*scheduling.BackfillRequest)
		field string
	}{
		"neither template nor config": {func(r *scheduling.BackfillRequest) { r.Template = "" }, "template"},
		"both":                        {func(r *scheduling.BackfillRequest) { r.Config = []byte("version: 1") }, "template"},
		"params without template": {func(r *scheduling.BackfillRequest) {
			r.Template, r.Config = "", []byte("version: 1")
		}, "params"},
		"no from":          {func(r *scheduling.BackfillRequest) { r.From = time.Time{} }, "from"},
		"no to":            {func(r *scheduling.BackfillRequest) { r.To = time.Time{} }, "to"},
		"to before from":   {func(r *scheduling.BackfillRequest) { r.To = day(1) }, "to"},
		"bad window":       {func(r *scheduling.BackfillRequest) { r.Window = "1 day" }, "window"},
		"too many windows": {func(r *scheduling.BackfillRequest) { r.Window = "PT1S" }, "window"},
		"bad zone":         {func(r *scheduling.BackfillRequest) { r.Timezone = "Nowhere/Land" }, "timezone"},
		"max_active zero":  {func(r *scheduling.BackfillRequest) { r.MaxActive = n(0) }, "max_active"},
		"max_active big":   {func(r *scheduling.BackfillRequest) { r.MaxActive = n(1001) }, "max_active"},
		"pool":             {func(r *scheduling.BackfillRequest) { r.Pool = "No Pool" }, "pool"},
	} {
		t.Run(name, func(t *testing.T) {
			req := ok()
			tc.mod(&req)
			_, err := w.svc.Backfill(w.ctx, operator, req)
			var ie *runs.InvalidRequestError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, tc.field, ie.Field, err.Error())
		})
	}
	_, err := w.svc.Backfill(w.ctx, runs.Principal{Name: "vic", Role: runs.Viewer}, ok())
	require.ErrorIs(t, err, runs.ErrForbidden)
	list, err := w.st.List(w.ctx, runs.Filter{Limit: 10})
	require.NoError(t, err)
	require.Empty(t, list, "no refused backfill created a run")
}
