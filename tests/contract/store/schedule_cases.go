package storecontract

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// scheduleCases: schedules, their ticks (one transaction with the run, the overlap
// decision inside it, fenced by the scheduler term) and the leader's term.
func scheduleCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"schedules round trip and keep their template": func(t *testing.T, e *env) {
			sc := e.schedule(t, "orders", func(sc *scheduling.Schedule) {
				sc.StartDate, sc.Catchup, sc.MaxCatchupRuns, sc.Overlap = "2026-03-08", true, 7, schedule.OverlapQueue
				sc.Pool, sc.Labels, sc.ParamsSealed = "gpu", map[string]string{"team": "data"}, true
			})
			got, err := e.s.GetSchedule(e.ctx, sc.ID)
			require.NoError(t, err)
			require.Equal(t, sc.Cron, got.Cron)
			require.Equal(t, "Europe/Berlin", got.Timezone)
			require.Equal(t, "2026-03-08", got.StartDate)
			require.True(t, got.Catchup)
			require.Equal(t, 7, got.MaxCatchupRuns)
			require.Equal(t, schedule.OverlapQueue, got.Overlap)
			require.Equal(t, "gpu", got.Pool)
			require.Equal(t, map[string]string{"team": "data"}, got.Labels)
			require.True(t, got.ParamsSealed)
			require.Equal(t, sc.Params, got.Params)
			require.True(t, got.LastTick.IsZero())
			require.Equal(t, sc.CreatedAt.UnixMilli(), got.CreatedAt.UnixMilli())

			paused, err := e.s.SetPaused(e.ctx, sc.ID, true, time.Now())
			require.NoError(t, err)
			require.True(t, paused.Paused)
			list, err := e.s.ListSchedules(e.ctx)
			require.NoError(t, err)
			require.Len(t, list, 1)
			require.True(t, list[0].Paused)

			require.ErrorIs(t, e.s.DeleteTemplate(e.ctx, "orders"), templates.ErrInUse, "a scheduled template stays")
			require.NoError(t, e.s.DeleteSchedule(e.ctx, sc.ID))
			_, err = e.s.GetSchedule(e.ctx, sc.ID)
			require.ErrorIs(t, err, run.ErrNotFound)
			require.NoError(t, e.s.DeleteTemplate(e.ctx, "orders"))
		},
		"missing schedules and templates are not found": func(t *testing.T, e *env) {
			err := e.s.AddSchedule(e.ctx, &scheduling.Schedule{ID: "s1", TemplateID: "nope", Cron: "* * * * *",
				Timezone: "UTC", MaxCatchupRuns: 1, Overlap: schedule.OverlapSkip, Params: "{}", CreatedBy: "admin",
				CreatedAt: time.Now(), UpdatedAt: time.Now()})
			require.ErrorIs(t, err, run.ErrNotFound)
			_, err = e.s.GetSchedule(e.ctx, "nope")
			require.ErrorIs(t, err, run.ErrNotFound)
			_, err = e.s.SetPaused(e.ctx, "nope", true, time.Now())
			require.ErrorIs(t, err, run.ErrNotFound)
			require.ErrorIs(t, e.s.DeleteSchedule(e.ctx, "nope"), run.ErrNotFound)
		},
		"a tick creates its run once, with the tick row": func(t *testing.T, e *env) {
			sc := e.schedule(t, "orders")
			lease := e.term(t)
			at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
			r := tickRec("orders", sc, at)
			res, err := e.s.CreateTick(e.ctx, r, runs.Tick{ScheduleID: sc.ID, Instant: at, Overlap: schedule.OverlapSkip, Epoch: lease.Epoch()})
			require.NoError(t, err)
			require.True(t, res.Created)
			require.Equal(t, "pending", res.Status)
			got := e.get(t, r.ID)
			require.Equal(t, "schedule:"+sc.ID+":2026-03-08T07:00:00Z", got.RunKey)
			require.Equal(t, "schedule", got.TriggerKind)

			// Again (a restart, a new leader): the same run, nothing new.
			again, err := e.s.CreateTick(e.ctx, tickRec("orders", sc, at), runs.Tick{ScheduleID: sc.ID, Instant: at, Overlap: schedule.OverlapSkip, Epoch: lease.Epoch()})
			require.NoError(t, err)
			require.False(t, again.Created)
			require.Equal(t, r.ID, again.RunID)

			ticks, err := e.s.ListTicks(e.ctx, sc.ID, time.Time{}, 10)
			require.NoError(t, err)
			require.Len(t, ticks, 1)
			require.Equal(t, schedule.OutcomeCreated, ticks[0].Status)
			require.Equal(t, r.ID, ticks[0].RunID)
			require.True(t, at.Equal(ticks[0].Instant))
			require.Equal(t, lease.Epoch(), ticks[0].Epoch)
			stored, err := e.s.GetSchedule(e.ctx, sc.ID)
			require.NoError(t, err)
			require.True(t, at.Equal(stored.LastTick))
		},
		"overlap skip records the tick skipped while the schedule's earlier run is active": func(t *testing.T, e *env) {
			sc := e.schedule(t, "orders")
			lease := e.term(t)
			before := time.Date(2026, 3, 8, 6, 55, 0, 0, time.UTC)
			busy := tickRec("orders", sc, before)
			_, err := e.s.CreateTick(e.ctx, busy, runs.Tick{ScheduleID: sc.ID, Instant: before, Overlap: schedule.OverlapSkip, Epoch: lease.Epoch()})
			require.NoError(t, err)
			at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
			r := tickRec("orders", sc, at)
			res, err := e.s.CreateTick(e.ctx, r, runs.Tick{ScheduleID: sc.ID, Instant: at, Overlap: schedule.OverlapSkip, Epoch: lease.Epoch()})
			require.NoError(t, err)
			require.False(t, res.Created)
			require.Equal(t, schedule.ReasonOverlap, res.Skipped)
			_, err = e.s.Get(e.ctx, r.ID)
			require.ErrorIs(t, err, run.ErrNotFound, "a skipped tick stores no run")
			ticks, err := e.s.ListTicks(e.ctx, sc.ID, time.Time{}, 10)
			require.NoError(t, err)
			require.Len(t, ticks, 2)
			require.Equal(t, schedule.OutcomeSkipped, ticks[0].Status)
			require.Equal(t, schedule.ReasonOverlap, ticks[0].Reason)
			require.Empty(t, ticks[0].RunID)
			require.Equal(t, "pending", e.get(t, busy.ID).Status)
		},
		"ticks of two schedules of one template never collapse": func(t *testing.T, e *env) {
			for _, policy := range []schedule.OverlapPolicy{schedule.OverlapSkip, schedule.OverlapQueue} {
				tpl := "regions-" + string(policy)
				eu := e.schedule(t, tpl, func(sc *scheduling.Schedule) { sc.ID, sc.Overlap, sc.Params = tpl+"-eu", policy, `{"region":"eu"}` })
				us := e.schedule(t, tpl, func(sc *scheduling.Schedule) { sc.ID, sc.Overlap, sc.Params = tpl+"-us", policy, `{"region":"us"}` })
				lease := e.term(t)
				// A manual run of the key is no schedule's earlier run either.
				e.create(t, rec(tpl))
				at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
				ids := map[string]bool{}
				for _, sc := range []*scheduling.Schedule{eu, us} {
					r := tickRec(tpl, sc, at)
					r.Serial = policy == schedule.OverlapQueue
					res, err := e.s.CreateTick(e.ctx, r, runs.Tick{ScheduleID: sc.ID, Instant: at, Overlap: policy, Epoch: lease.Epoch()})
					require.NoError(t, err, policy)
					require.True(t, res.Created, "%s: the tick of schedule %s creates its own run", policy, sc.ID)
					require.Empty(t, res.Skipped, policy)
					require.Equal(t, r.ID, res.RunID, policy)
					ticks, err := e.s.ListTicks(e.ctx, sc.ID, time.Time{}, 10)
					require.NoError(t, err)
					require.Len(t, ticks, 1, policy)
					require.Equal(t, r.ID, ticks[0].RunID, policy)
					require.Equal(t, schedule.RunKey(sc.ID, at), e.get(t, r.ID).RunKey, policy)
					ids[r.ID] = true
				}
				require.Len(t, ids, 2, "%s: two runs at one instant", policy)
			}
		},
		"overlap queue stores the run queued and it promotes when the active one ends": func(t *testing.T, e *env) {
			sc := e.schedule(t, "orders")
			lease := e.term(t)
			active := e.claimOne(t, "orders", longTTL)
			at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
			r := tickRec("orders", sc, at)
			r.Serial = true
			res, err := e.s.CreateTick(e.ctx, r, runs.Tick{ScheduleID: sc.ID, Instant: at, Overlap: schedule.OverlapQueue, Epoch: lease.Epoch()})
			require.NoError(t, err)
			require.True(t, res.Created)
			require.Equal(t, "queued", res.Status)
			ticks, err := e.s.ListTicks(e.ctx, sc.ID, time.Time{}, 10)
			require.NoError(t, err)
			require.Equal(t, schedule.OutcomeQueued, ticks[0].Status)
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: active.ID, Epoch: active.Epoch},
				cluster.Outcome{Status: "completed"}, nil))
			require.Equal(t, "pending", e.get(t, r.ID).Status)
		},
		"purge deletes old ticks but keeps the newest of each schedule": func(t *testing.T, e *env) {
			a, b := e.schedule(t, "orders"), e.schedule(t, "events")
			lease := e.term(t)
			at := func(m int) time.Time { return time.Date(2026, 3, 8, 7, m, 0, 0, time.UTC) }
			// The newest instant is recorded first, so it is also the oldest row.
			for _, m := range []int{15, 0, 5} {
				_, err := e.s.RecordTick(e.ctx, scheduling.Tick{ScheduleID: a.ID, Instant: at(m), Status: schedule.OutcomeSkipped,
					Reason: schedule.ReasonMissed, Epoch: lease.Epoch()})
				require.NoError(t, err)
			}
			res, err := e.s.CreateTick(e.ctx, tickRec("orders", a, at(10)), runs.Tick{ScheduleID: a.ID, Instant: at(10),
				Overlap: schedule.OverlapSkip, Epoch: lease.Epoch()})
			require.NoError(t, err)
			require.True(t, res.Created)
			_, err = e.s.RecordTick(e.ctx, scheduling.Tick{ScheduleID: b.ID, Instant: at(0), Status: schedule.OutcomeSkipped,
				Reason: schedule.ReasonPaused, Epoch: lease.Epoch()})
			require.NoError(t, err)
			instants := func(id string) []int {
				ticks, err := e.s.ListTicks(e.ctx, id, time.Time{}, 100)
				require.NoError(t, err)
				out := []int{}
				for _, tk := range ticks {
					out = append(out, tk.Instant.UTC().Minute())
				}
				return out
			}

			_, err = e.s.Purge(e.ctx, purgeBefore(time.Now().Add(-time.Hour)))
			require.NoError(t, err)
			require.Equal(t, []int{15, 10, 5, 0}, instants(a.ID), "nothing is old enough yet")

			req := purgeBefore(time.Now().Add(time.Hour))
			req.BatchSize = 1 // a tick per transaction: the newest of each schedule still stays
			purged, err := e.s.Purge(e.ctx, req)
			require.NoError(t, err)
			require.Zero(t, purged.Runs, "the tick's run is not terminal")
			require.Equal(t, []int{15}, instants(a.ID), "only the newest tick stays")
			require.Equal(t, []int{0}, instants(b.ID), "a schedule's only tick stays")
			got, err := e.s.GetSchedule(e.ctx, a.ID)
			require.NoError(t, err)
			require.True(t, at(15).Equal(got.LastTick), "the scheduler resumes where it stopped")
			require.Equal(t, "pending", e.get(t, res.RunID).Status, "the run of a purged tick stays")
		},
		"tick writes are fenced by the scheduler term": func(t *testing.T, e *env) {
			sc := e.schedule(t, "orders")
			old := e.term(t)
			current := e.term(t)
			require.Greater(t, current.Epoch(), old.Epoch())
			at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
			_, err := e.s.CreateTick(e.ctx, tickRec("orders", sc, at), runs.Tick{ScheduleID: sc.ID, Instant: at, Overlap: schedule.OverlapSkip, Epoch: old.Epoch()})
			require.ErrorIs(t, err, run.ErrLeaseLost)
			_, err = e.s.RecordTick(e.ctx, scheduling.Tick{ScheduleID: sc.ID, Instant: at, Status: schedule.OutcomeSkipped,
				Reason: schedule.ReasonMissed, Epoch: old.Epoch()})
			require.ErrorIs(t, err, run.ErrLeaseLost)
			require.ErrorIs(t, old.Heartbeat(e.ctx), run.ErrLeaseLost)
			ticks, err := e.s.ListTicks(e.ctx, sc.ID, time.Time{}, 10)
			require.NoError(t, err)
			require.Empty(t, ticks, "a deposed leader writes nothing")
			require.NoError(t, current.Heartbeat(e.ctx))
		},
		"skipped ticks are recorded once, summaries with their span": func(t *testing.T, e *env) {
			sc := e.schedule(t, "orders")
			lease := e.term(t)
			first := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			last := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			sum := scheduling.Tick{ScheduleID: sc.ID, Instant: last, Status: schedule.OutcomeSkipped, Reason: schedule.ReasonMissed,
				SummaryCount: 5000, SummaryFirst: first, Epoch: lease.Epoch()}
			ok, err := e.s.RecordTick(e.ctx, sum)
			require.NoError(t, err)
			require.True(t, ok)
			ok, err = e.s.RecordTick(e.ctx, sum)
			require.NoError(t, err)
			require.False(t, ok, "a tick is recorded once")
			later := sum
			later.Instant, later.SummaryCount, later.SummaryFirst, later.Reason = last.Add(time.Minute), 0, time.Time{}, schedule.ReasonPaused
			_, err = e.s.RecordTick(e.ctx, later)
			require.NoError(t, err)
			ticks, err := e.s.ListTicks(e.ctx, sc.ID, time.Time{}, 10)
			require.NoError(t, err)
			require.Len(t, ticks, 2)
			require.Equal(t, schedule.ReasonPaused, ticks[0].Reason, "newest first")
			require.Equal(t, 5000, ticks[1].SummaryCount)
			require.True(t, first.Equal(ticks[1].SummaryFirst))
			older, err := e.s.ListTicks(e.ctx, sc.ID, later.Instant, 10)
			require.NoError(t, err)
			require.Len(t, older, 1, "before pages back")
		},
		"terms bump the epoch and record leaders with a clean stop": func(t *testing.T, e *env) {
			a := e.term(t)
			b := e.term(t)
			require.Equal(t, a.Epoch()+1, b.Epoch())
			require.NoError(t, b.Resign(e.ctx))
			require.NoError(t, b.Resign(e.ctx), "resigning twice is harmless")
			leaders, err := e.s.Leaders(e.ctx)
			require.NoError(t, err)
			require.Len(t, leaders, 2)
			require.Equal(t, b.Epoch(), leaders[0].Epoch)
			require.False(t, leaders[0].StoppedAt.IsZero())
			require.True(t, leaders[1].StoppedAt.IsZero(), "a term that never stopped cleanly has no stop time")
			require.Equal(t, "member-a", leaders[1].InstanceID)
			c := e.term(t)
			require.NoError(t, a.Resign(e.ctx), "a deposed leader resigns late")
			leaders, err = e.s.Leaders(e.ctx)
			require.NoError(t, err)
			require.True(t, leaders[2].StoppedAt.IsZero(), "a deposed term records no stop time")
			require.NoError(t, c.Resign(e.ctx))
		},
		"clustered members: one leads, the next takes over when it resigns": func(t *testing.T, e *env) {
			if !e.h.Shared {
				requireUnshared(t, e)
				return
			}
			other := e.open(t, store.Options{})
			c := scheduling.Candidate{InstanceID: "member-a", Host: "h", PID: 1, Version: "test", TTL: 30 * time.Second}
			a, err := e.s.Elector(true).Campaign(e.ctx, c)
			require.NoError(t, err)
			require.NotNil(t, a)
			c.InstanceID = "member-b"
			standby := other.Elector(true)
			b, err := standby.Campaign(e.ctx, c)
			require.NoError(t, err)
			require.Nil(t, b, "the lock is held")
			require.NoError(t, a.Resign(e.ctx))
			require.Eventually(t, func() bool {
				b, err = standby.Campaign(e.ctx, c)
				return err == nil && b != nil
			}, 10*time.Second, 50*time.Millisecond)
			require.Greater(t, b.Epoch(), a.Epoch())
			require.NoError(t, b.Heartbeat(e.ctx))
			require.NoError(t, b.Resign(e.ctx))
		},
		"max_active lets that many serial runs of a key be active, the rest queue in order": func(t *testing.T, e *env) {
			two := func(r *runs.Record) { r.Serial, r.MaxActive, r.TriggerKind = true, 2, "backfill" }
			a := e.claimOne(t, "bf", longTTL, two)
			b := e.create(t, rec("bf", two))
			c := e.create(t, rec("bf", two))
			d := e.create(t, rec("bf", two))
			require.Equal(t, "pending", e.get(t, b.ID).Status, "a second active run is allowed")
			require.Equal(t, "queued", e.get(t, c.ID).Status)
			require.Equal(t, "queued", e.get(t, d.ID).Status)
			require.Equal(t, 2, e.get(t, c.ID).MaxActive)
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: a.ID, Epoch: a.Epoch},
				cluster.Outcome{Status: "completed"}, nil))
			require.Equal(t, "pending", e.get(t, c.ID).Status, "the oldest queued run takes the freed place")
			require.Equal(t, "queued", e.get(t, d.ID).Status)
		},
		"campaigns race: exactly one wins": func(t *testing.T, e *env) {
			if !e.h.Shared {
				requireUnshared(t, e)
				return
			}
			var (
				mu  sync.Mutex
				won []scheduling.Lease
				wg  sync.WaitGroup
			)
			for i := range 3 {
				s := e.open(t, store.Options{})
				wg.Add(1)
				go func() {
					defer wg.Done()
					l, err := s.Elector(true).Campaign(e.ctx, scheduling.Candidate{InstanceID: "m" + string(rune('a'+i)),
						Host: "h", PID: i, Version: "test", TTL: 30 * time.Second})
					assertNoError(t, err)
					if l != nil {
						mu.Lock()
						won = append(won, l)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			require.Len(t, won, 1)
			require.NoError(t, won[0].Resign(e.ctx))
		},
	}
}

// requireUnshared: a history only one process can open (memory) has nobody to share
// leadership with, so every campaign wins, each with a new term.
func requireUnshared(t *testing.T, e *env) {
	t.Helper()
	c := scheduling.Candidate{InstanceID: "member-a", Host: "h", PID: 1, Version: "test", TTL: 30 * time.Second}
	a, err := e.s.Elector(true).Campaign(e.ctx, c)
	require.NoError(t, err)
	b, err := e.s.Elector(true).Campaign(e.ctx, c)
	require.NoError(t, err)
	require.Greater(t, b.Epoch(), a.Epoch())
}

// schedule stores a template tpl and a schedule on it.
func (e *env) schedule(t *testing.T, tpl string, mods ...func(*scheduling.Schedule)) *scheduling.Schedule {
	t.Helper()
	if _, err := e.s.LatestTemplate(e.ctx, tpl); err != nil {
		require.NoError(t, e.s.AddTemplate(e.ctx, &templates.Template{ID: tpl, Config: "version: 1\n", CreatedBy: "admin", CreatedAt: time.Now()}))
	}
	now := time.Now().UTC()
	sc := &scheduling.Schedule{ID: "sch-" + tpl + "-" + now.Format("150405.000000000"), TemplateID: tpl, Cron: "*/5 * * * *",
		Timezone: "Europe/Berlin", MaxCatchupRuns: 1, Overlap: schedule.OverlapSkip, Params: `{"day":"monday"}`,
		CreatedBy: "admin", CreatedAt: now, UpdatedAt: now}
	for _, m := range mods {
		m(sc)
	}
	require.NoError(t, e.s.AddSchedule(e.ctx, sc))
	return sc
}

// term takes a new scheduler term as a single server would.
func (e *env) term(t *testing.T) scheduling.Lease {
	t.Helper()
	l, err := e.s.Elector(false).Campaign(e.ctx, scheduling.Candidate{InstanceID: "member-a", Host: "h", PID: 1, Version: "test", TTL: 30 * time.Second})
	require.NoError(t, err)
	require.NotNil(t, l)
	return l
}

// tickRec is the run of the tick of schedule sc at `at`.
func tickRec(name string, sc *scheduling.Schedule, at time.Time) *runs.Record {
	return rec(name, func(r *runs.Record) {
		r.TriggerKind, r.RunKey, r.LogicalAt = "schedule", schedule.RunKey(sc.ID, at), at
		r.TemplateID, r.TemplateVersion = name, 1
	})
}
