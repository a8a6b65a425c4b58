package store

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/schedule"
	"github.com/sluicehq/sluice/tests/testdb"
)

// Ticks recorded before run keys named their schedule stay valid after migration 0013:
// each tick's run gets its schedule's key, so the next pass at that instant replays it
// instead of creating a second run, and a run two schedules' ticks collapsed onto keeps
// both ticks pointing at it.
func TestMigrationGivesOldTickRunsTheirScheduleKey(t *testing.T) {
	t.Parallel()
	for name, url := range testdb.Histories() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := Open(ctx, url(t), Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			require.NoError(t, s.Migrate(ctx))
			now := time.Now().UTC()
			require.NoError(t, s.AddTemplate(ctx, &templates.Template{ID: "regions", Config: "version: 1\n", CreatedBy: "admin", CreatedAt: now}))
			addSchedule := func(id string) {
				require.NoError(t, s.AddSchedule(ctx, &scheduling.Schedule{ID: id, TemplateID: "regions", Cron: "0 * * * *",
					Timezone: "UTC", MaxCatchupRuns: 1, Overlap: schedule.OverlapSkip, Params: "{}", CreatedBy: "admin",
					CreatedAt: now, UpdatedAt: now}))
			}
			addSchedule("eu")
			addSchedule("us")
			lease, err := s.Elector(false).Campaign(ctx, scheduling.Candidate{InstanceID: "m", Host: "h", PID: 1, Version: "t", TTL: time.Minute})
			require.NoError(t, err)
			at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
			oldKey := "schedule:" + at.Format("2006-01-02T15:04:05Z")
			tickRun := func(scheduleID, key string, at time.Time) runs.CreateResult {
				r := &runs.Record{ID: uuid.Must(uuid.NewV7()).String(), Name: "regions", Pool: "default", TriggerKind: "schedule",
					RunKey: key, RunDate: at.Format(time.DateOnly), LogicalAt: at, MaxAttempts: 3, Config: "version: 1\n", CreatedAt: now}
				res, err := s.CreateTick(ctx, r, runs.Tick{ScheduleID: scheduleID, Instant: at, Overlap: schedule.OverlapQueue, Epoch: lease.Epoch()})
				require.NoError(t, err)
				return res
			}
			// What the previous release stored: keys without the schedule, and the us tick
			// collapsed onto the eu run.
			first := tickRun("eu", oldKey, at)
			require.True(t, first.Created)
			nextMillisecond(t, s) // the us tick is recorded after the eu one
			collapsed := tickRun("us", oldKey, at)
			require.Equal(t, first.RunID, collapsed.RunID)
			manual, err := s.Create(ctx, &runs.Record{ID: uuid.Must(uuid.NewV7()).String(), Name: "regions", Pool: "default",
				TriggerKind: "api", RunKey: "schedule:2026-06-01T11:00:00Z", RunDate: "2026-06-01", LogicalAt: now, MaxAttempts: 3,
				Config: "version: 1\n", CreatedAt: now}, nil)
			require.NoError(t, err)

			_, err = s.db.NewRaw("DELETE FROM " + migrationsTable + " WHERE name = '0013'").Exec(ctx)
			require.NoError(t, err)
			require.NoError(t, s.Migrate(ctx))

			got, err := s.Get(ctx, first.RunID)
			require.NoError(t, err)
			require.Equal(t, schedule.RunKey("eu", at), got.RunKey, "the run takes the key of the schedule that ticked first")
			other, err := s.Get(ctx, manual.RunID)
			require.NoError(t, err)
			require.Equal(t, "schedule:2026-06-01T11:00:00Z", other.RunKey, "a run no tick made keeps the key it was given")
			for _, id := range []string{"eu", "us"} {
				ticks, err := s.ListTicks(ctx, id, time.Time{}, 10)
				require.NoError(t, err)
				require.Len(t, ticks, 1, id)
				require.Equal(t, first.RunID, ticks[0].RunID, "%s: the tick still points at its run", id)
			}
			again := tickRun("eu", schedule.RunKey("eu", at), at)
			require.False(t, again.Created, "the tick of that instant is not made twice")
			require.Equal(t, first.RunID, again.RunID)
			next := tickRun("us", schedule.RunKey("us", at.Add(time.Hour)), at.Add(time.Hour))
			require.True(t, next.Created, "the next tick of the other schedule has a run of its own")
		})
	}
}

// nextMillisecond returns once the history's clock, which stamps the rows it records in
// milliseconds, reads a later millisecond than when it was called: a row stamped from
// now on sorts after every row stamped before. It asks that clock, not a pause.
func nextMillisecond(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	start, err := s.Now(ctx)
	require.NoError(t, err)
	for range 1_000_000 {
		now, err := s.Now(ctx)
		require.NoError(t, err)
		if now.Truncate(time.Millisecond).After(start.Truncate(time.Millisecond)) {
			return
		}
	}
	t.Fatal("the history's clock stands still")
}
