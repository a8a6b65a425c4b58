package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/notify"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/schedule"
)

// A created, paused or resumed schedule is heard on the schedule channel (the leader
// keeps schedules in memory, so every change to one is news to it); creating a run is not.
func TestHearsScheduleChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	s, l := f.s, f.l
	require.NotContains(t, []string{s.WorkChannel(), s.CancelChannel()}, s.ScheduleChannel())
	heard := func(msg string) {
		t.Helper()
		select {
		case <-l.ScheduleWakeups():
		case <-time.After(waitFor):
			t.Fatal("no schedule wake-up: " + msg)
		}
	}
	silent := func(msg string) {
		t.Helper()
		f.mark(t) // whatever was sent before is in its channel now
		select {
		case <-l.ScheduleWakeups():
			t.Fatal("unexpected schedule wake-up: " + msg)
		default:
		}
	}
	heard("a subscription announces a schedule wake-up: a change may have been missed")
	silent("nothing changed")

	_, err := s.Create(ctx, newRun("p"), nil)
	require.NoError(t, err)
	silent("a run is not a schedule")

	now := time.Now()
	require.NoError(t, s.AddTemplate(ctx, &templates.Template{ID: "orders", Config: "version: 1\n", CreatedBy: "admin", CreatedAt: now}))
	sc := &scheduling.Schedule{ID: "sch-1", TemplateID: "orders", Cron: "* * * * *", Timezone: "UTC", MaxCatchupRuns: 1,
		Overlap: schedule.OverlapSkip, Params: "{}", CreatedBy: "admin", CreatedAt: now, UpdatedAt: now}
	require.NoError(t, s.AddSchedule(ctx, sc))
	heard("a new schedule")
	_, err = s.SetPaused(ctx, sc.ID, true, time.Now())
	require.NoError(t, err)
	heard("a paused schedule")
	_, err = s.SetPaused(ctx, sc.ID, false, time.Now())
	require.NoError(t, err)
	heard("a resumed schedule")
}

func TestNewRefusesASharedScheduleChannel(t *testing.T) {
	t.Parallel()
	_, err := notify.New(notify.Config{URL: "postgres://h/db", WorkChannel: "w", CancelChannel: "c", ScheduleChannel: "w"})
	require.ErrorContains(t, err, `schedule channel "w"`)
}
