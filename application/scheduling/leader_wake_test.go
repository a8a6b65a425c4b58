package scheduling_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/notify"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/tests/testdb"
)

// countingStore counts the leader's passes (each lists the schedules once). A pass is
// counted once its read returned: counted at the call, a schedule created right after
// could still be seen by that very read, as happened under CI load.
type countingStore struct {
	scheduling.Store
	lists atomic.Int64
}

func (c *countingStore) ListSchedules(ctx context.Context) ([]*scheduling.Schedule, error) {
	list, err := c.Store.ListSchedules(ctx)
	c.lists.Add(1)
	return list, err
}

// A schedule created on another member of a PostgreSQL history wakes the leader through
// LISTEN: its due tick becomes a run long before the leader's poll would have looked
// (SPEC §9.3). The poll is ten minutes, so a tick within seconds can only come from the
// notification; that the pass count is exactly two (the first pass, the wake-up's) shows
// no poll ran. (A "poll only" twin that watched for nothing to happen for a while proved
// only that the machine was not slow, and is gone: tests wait on events, not on quiet.)
func TestLeaderWakesOnAnotherMembersSchedule(t *testing.T) {
	t.Parallel()
	const longPoll = 10 * time.Minute
	url := testdb.Postgres(t)
	w := newWorld(t, url)
	w.clock.set(time.Now())
	w.template(t, "orders", "")
	require.NotEmpty(t, w.st.ScheduleChannel(), "a PostgreSQL history announces schedules")
	ln, err := notify.New(notify.Config{URL: url, WorkChannel: w.st.WorkChannel(), CancelChannel: w.st.CancelChannel(),
		ScheduleChannel: w.st.ScheduleChannel()})
	require.NoError(t, err)
	ln.Start()
	t.Cleanup(ln.Stop)
	require.Eventually(t, ln.Connected, 30*time.Second, 10*time.Millisecond)
	<-ln.ScheduleWakeups() // what every subscription announces
	wake := ln.ScheduleWakeups()
	leaderStore := &countingStore{Store: w.st}
	leading := scheduling.New(scheduling.Deps{Store: leaderStore, Templates: w.tpl, Clock: w.clock.Now}, scheduling.Config{})
	l := scheduling.NewLeader(leading, w.st.Elector(false), scheduling.LeaderConfig{
		Candidate: scheduling.Candidate{InstanceID: "leader", Host: "h", PID: 1, Version: "t", TTL: time.Minute},
		Poll:      longPoll, Wake: wake,
	})
	l.Start()
	t.Cleanup(l.Stop)
	// The first pass found no schedule; the leader now sleeps its poll.
	require.Eventually(t, func() bool { return leaderStore.lists.Load() >= 1 }, 30*time.Second, 10*time.Millisecond)

	// Another member (its own service, so no in-process wake-up) creates a
	// schedule that is due at once (today's midnight) and not again today.
	other := scheduling.New(scheduling.Deps{Store: w.st, Templates: w.tpl, Clock: w.clock.Now}, scheduling.Config{})
	v, err := other.Create(w.ctx, admin, scheduling.CreateRequest{TemplateID: "orders", Cron: "0 0 * * *",
		StartDate: time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)})
	require.NoError(t, err)
	ticked := func() bool {
		ticks, err := w.st.ListTicks(w.ctx, v.ID, time.Time{}, 1)
		require.NoError(t, err)
		return len(ticks) == 1 && ticks[0].RunID != ""
	}
	require.Eventually(t, ticked, 30*time.Second, 10*time.Millisecond, "the notification wakes the leader")
	require.Equal(t, int64(2), leaderStore.lists.Load(), "one pass for the wake-up, none for the poll")
}
