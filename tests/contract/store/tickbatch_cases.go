package storecontract

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// tickBatchCases: CreateTicks and RecordTicks decide each tick of a batch as the single
// calls would one after the other, in one transaction fenced once.
func tickBatchCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a batch creates one run per tick, with labels, audit and tick rows": func(t *testing.T, e *env) {
			a, b := e.schedule(t, "orders"), e.schedule(t, "events")
			lease := e.term(t)
			at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
			var batch []runs.TickCreate
			for _, sc := range []*scheduling.Schedule{a, b} {
				tpl := map[string]string{a.ID: "orders", b.ID: "events"}[sc.ID]
				r := tickRec(tpl, sc, at)
				r.Labels = map[string]string{"team": "data", "tpl": tpl}
				r.Audit = &runs.AuditEntry{Actor: "scheduler", Action: runs.ActionSubmitted, RunID: r.ID, At: at,
					Details: map[string]any{"trigger_kind": "schedule"}}
				batch = append(batch, runs.TickCreate{Rec: r, Tick: runs.Tick{ScheduleID: sc.ID, Instant: at, Overlap: schedule.OverlapSkip, Epoch: lease.Epoch()}})
			}
			res, err := e.s.CreateTicks(e.ctx, batch)
			require.NoError(t, err)
			require.Len(t, res, 2)
			for i, tc := range batch {
				require.True(t, res[i].Created, i)
				require.Equal(t, tc.Rec.ID, res[i].RunID)
				require.Equal(t, "pending", res[i].Status)
				got := e.get(t, tc.Rec.ID)
				require.Equal(t, tc.Rec.Labels, got.Labels)
				require.Equal(t, schedule.RunKey(tc.Tick.ScheduleID, at), got.RunKey)
				ticks, err := e.s.ListTicks(e.ctx, tc.Tick.ScheduleID, time.Time{}, 10)
				require.NoError(t, err)
				require.Len(t, ticks, 1)
				require.Equal(t, tc.Rec.ID, ticks[0].RunID)
				require.Equal(t, schedule.OutcomeCreated, ticks[0].Status)
			}
			byLabel, err := e.s.List(e.ctx, runs.Filter{Labels: map[string]string{"tpl": "events"}, Limit: 10})
			require.NoError(t, err)
			require.Len(t, byLabel, 1, "label rows are stored for the label filter")
			audit, err := e.s.ListAudit(e.ctx, 0, 100)
			require.NoError(t, err)
			n := 0
			for _, en := range audit {
				if en.Action == runs.ActionSubmitted && (en.RunID == batch[0].Rec.ID || en.RunID == batch[1].Rec.ID) {
					require.Equal(t, "pending", en.Details["status"])
					n++
				}
			}
			require.Equal(t, 2, n, "one audit entry per run")
		},
		"a batch replays a tick created before, and a tick twice in one batch": func(t *testing.T, e *env) {
			sc := e.schedule(t, "orders")
			lease := e.term(t)
			at := func(m int) time.Time { return time.Date(2026, 3, 8, 7, m, 0, 0, time.UTC) }
			tick := func(m int) runs.Tick {
				return runs.Tick{ScheduleID: sc.ID, Instant: at(m), Overlap: schedule.OverlapQueue, Epoch: lease.Epoch()}
			}
			first := tickRec("orders", sc, at(0))
			_, err := e.s.CreateTick(e.ctx, first, tick(0))
			require.NoError(t, err)
			again, dup1, dup2 := tickRec("orders", sc, at(0)), tickRec("orders", sc, at(1)), tickRec("orders", sc, at(1))
			res, err := e.s.CreateTicks(e.ctx, []runs.TickCreate{{Rec: again, Tick: tick(0)}, {Rec: dup1, Tick: tick(1)}, {Rec: dup2, Tick: tick(1)}})
			require.NoError(t, err)
			require.False(t, res[0].Created, "the recorded tick is a replay")
			require.Equal(t, first.ID, res[0].RunID)
			require.Equal(t, "pending", res[0].Status)
			require.True(t, res[1].Created)
			require.False(t, res[2].Created, "the second copy replays the first")
			require.Equal(t, dup1.ID, res[2].RunID)
			_, err = e.s.Get(e.ctx, again.ID)
			require.ErrorIs(t, err, run.ErrNotFound)
			_, err = e.s.Get(e.ctx, dup2.ID)
			require.ErrorIs(t, err, run.ErrNotFound)
			ticks, err := e.s.ListTicks(e.ctx, sc.ID, time.Time{}, 10)
			require.NoError(t, err)
			require.Len(t, ticks, 2)
		},
		"overlap is decided within a batch as one tick after the other": func(t *testing.T, e *env) {
			skip := e.schedule(t, "orders")
			queue := e.schedule(t, "orders", func(sc *scheduling.Schedule) { sc.ID, sc.Overlap = "queue-1", schedule.OverlapQueue })
			other := e.schedule(t, "events")
			lease := e.term(t)
			at := func(m int) time.Time { return time.Date(2026, 3, 8, 7, m, 0, 0, time.UTC) }
			var batch []runs.TickCreate
			add := func(sc *scheduling.Schedule, tpl string, m int) {
				r := tickRec(tpl, sc, at(m))
				r.Serial = sc.Overlap == schedule.OverlapQueue
				batch = append(batch, runs.TickCreate{Rec: r, Tick: runs.Tick{ScheduleID: sc.ID, Instant: at(m), Overlap: sc.Overlap, Epoch: lease.Epoch()}})
			}
			add(skip, "orders", 0)
			add(queue, "orders", 0)
			add(other, "events", 0)
			add(skip, "orders", 1)
			add(queue, "orders", 1)
			add(other, "events", 1)
			res, err := e.s.CreateTicks(e.ctx, batch)
			require.NoError(t, err)
			require.True(t, res[0].Created, "the first tick of skip creates")
			// The queue schedule is serial: orders already has skip's pending run of this batch.
			require.True(t, res[1].Created)
			require.Equal(t, "queued", res[1].Status, "the serial decision sees the batch's earlier run")
			require.True(t, res[2].Created)
			require.Equal(t, schedule.ReasonOverlap, res[3].Skipped, "skip's own earlier tick in the batch makes it busy")
			require.False(t, res[3].Created)
			require.True(t, res[4].Created)
			require.Equal(t, "queued", res[4].Status)
			require.Equal(t, schedule.ReasonOverlap, res[5].Skipped)
			ticks, err := e.s.ListTicks(e.ctx, skip.ID, time.Time{}, 10)
			require.NoError(t, err)
			require.Len(t, ticks, 2)
			require.Equal(t, schedule.OutcomeSkipped, ticks[0].Status)
			require.Equal(t, schedule.ReasonOverlap, ticks[0].Reason)
			qt, err := e.s.ListTicks(e.ctx, queue.ID, time.Time{}, 10)
			require.NoError(t, err)
			require.Equal(t, schedule.OutcomeQueued, qt[0].Status)
		},
		"a stale term's batch is refused whole": func(t *testing.T, e *env) {
			a, b := e.schedule(t, "orders"), e.schedule(t, "events")
			old := e.term(t)
			e.term(t)
			at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
			ra, rb := tickRec("orders", a, at), tickRec("events", b, at)
			_, err := e.s.CreateTicks(e.ctx, []runs.TickCreate{
				{Rec: ra, Tick: runs.Tick{ScheduleID: a.ID, Instant: at, Overlap: schedule.OverlapSkip, Epoch: old.Epoch()}},
				{Rec: rb, Tick: runs.Tick{ScheduleID: b.ID, Instant: at, Overlap: schedule.OverlapSkip, Epoch: old.Epoch()}},
			})
			require.ErrorIs(t, err, run.ErrLeaseLost)
			_, err = e.s.RecordTicks(e.ctx, []scheduling.Tick{
				{ScheduleID: a.ID, Instant: at.Add(time.Minute), Status: schedule.OutcomeSkipped, Reason: schedule.ReasonMissed, Epoch: old.Epoch()},
			})
			require.ErrorIs(t, err, run.ErrLeaseLost)
			for _, id := range []string{ra.ID, rb.ID} {
				_, err = e.s.Get(e.ctx, id)
				require.ErrorIs(t, err, run.ErrNotFound, "a deposed leader's batch stores no run")
			}
			for _, id := range []string{a.ID, b.ID} {
				ticks, err := e.s.ListTicks(e.ctx, id, time.Time{}, 10)
				require.NoError(t, err)
				require.Empty(t, ticks)
			}
		},
		"batches over the same pipelines in opposite orders both commit": func(t *testing.T, e *env) {
			tpls := []string{"p-a", "p-b", "p-c", "p-d"}
			scs := make([]*scheduling.Schedule, len(tpls))
			for i, tpl := range tpls {
				scs[i] = e.schedule(t, tpl)
			}
			lease := e.term(t)
			batch := func(m int, reverse bool) []runs.TickCreate {
				at := time.Date(2026, 3, 8, 7, m, 0, 0, time.UTC)
				var out []runs.TickCreate
				for i := range tpls {
					if reverse {
						i = len(tpls) - 1 - i
					}
					out = append(out, runs.TickCreate{Rec: tickRec(tpls[i], scs[i], at),
						Tick: runs.Tick{ScheduleID: scs[i].ID, Instant: at, Overlap: schedule.OverlapQueue, Epoch: lease.Epoch()}})
				}
				return out
			}
			errs := make(chan error, 8)
			for m := range 8 {
				go func() {
					_, err := e.s.CreateTicks(e.ctx, batch(m, m%2 == 1))
					errs <- err
				}()
			}
			for range 8 {
				require.NoError(t, <-errs, "locks taken in one order never deadlock")
			}
			for _, sc := range scs {
				ticks, err := e.s.ListTicks(e.ctx, sc.ID, time.Time{}, 20)
				require.NoError(t, err)
				require.Len(t, ticks, 8)
			}
		},
		"the schedules' stamp moves on add, pause, resume and delete": func(t *testing.T, e *env) {
			stamp := func() string {
				t.Helper()
				st, err := e.s.SchedulesStamp(e.ctx)
				require.NoError(t, err)
				return st
			}
			last := stamp()
			moved := func(what string) {
				t.Helper()
				st := stamp()
				require.NotEqual(t, last, st, "%s moves the stamp", what)
				last = st
			}
			sc := e.schedule(t, "orders")
			moved("add")
			require.Equal(t, stamp(), stamp(), "a read alone does not")
			_, err := e.s.SetPaused(e.ctx, sc.ID, true, time.Now().Add(time.Second))
			require.NoError(t, err)
			moved("pause")
			_, err = e.s.SetPaused(e.ctx, sc.ID, false, time.Now().Add(2*time.Second))
			require.NoError(t, err)
			moved("resume")
			require.NoError(t, e.s.DeleteSchedule(e.ctx, sc.ID))
			moved("delete")
		},
		"a batch refuses runs past their queue limit, counting its own": func(t *testing.T, e *env) {
			e.create(t, rec("manual")) // one pending run already
			var batch []runs.TickCreate
			lease := e.term(t)
			at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
			for _, tpl := range []string{"q-a", "q-b", "q-c"} {
				sc := e.schedule(t, tpl)
				r := tickRec(tpl, sc, at)
				r.QueueLimit = 3
				batch = append(batch, runs.TickCreate{Rec: r, Tick: runs.Tick{ScheduleID: sc.ID, Instant: at, Overlap: schedule.OverlapSkip, Epoch: lease.Epoch()}})
			}
			res, err := e.s.CreateTicks(e.ctx, batch)
			require.NoError(t, err)
			require.True(t, res[0].Created)
			require.True(t, res[1].Created, "1 + 1 of the batch < 3")
			require.ErrorIs(t, res[2].Refused, runs.ErrQueueFull, "1 + 2 of the batch reach 3")
			require.False(t, res[2].Created)
			_, err = e.s.Get(e.ctx, batch[2].Rec.ID)
			require.ErrorIs(t, err, run.ErrNotFound)
			ticks, err := e.s.ListTicks(e.ctx, batch[2].Tick.ScheduleID, time.Time{}, 10)
			require.NoError(t, err)
			require.Empty(t, ticks, "a refused tick stays due")
		},
		"recorded ticks in a batch are inserted once": func(t *testing.T, e *env) {
			sc := e.schedule(t, "orders")
			lease := e.term(t)
			at := func(m int) scheduling.Tick {
				return scheduling.Tick{ScheduleID: sc.ID, Instant: time.Date(2026, 3, 8, 7, m, 0, 0, time.UTC),
					Status: schedule.OutcomeSkipped, Reason: schedule.ReasonPaused, Epoch: lease.Epoch()}
			}
			ok, err := e.s.RecordTick(e.ctx, at(0))
			require.NoError(t, err)
			require.True(t, ok)
			inserted, err := e.s.RecordTicks(e.ctx, []scheduling.Tick{at(0), at(1), at(2), at(1)})
			require.NoError(t, err)
			require.Equal(t, []bool{false, true, true, false}, inserted)
			ticks, err := e.s.ListTicks(e.ctx, sc.ID, time.Time{}, 10)
			require.NoError(t, err)
			require.Len(t, ticks, 3)
		},
	}
}
