package scheduling_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// barrier holds every tick's submission until n are in flight at once, then lets all
// through: a pass that handles schedules one at a time never gets past the first.
type barrier struct {
	scheduling.Templates
	n       int
	mu      sync.Mutex
	arrived int
	open    chan struct{}
}

func (b *barrier) Run(ctx context.Context, p runs.Principal, id string, req templates.RunRequest) (runs.SubmitResult, error) {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
	case <-ctx.Done():
		return runs.SubmitResult{}, ctx.Err()
	}
	return b.Templates.Run(ctx, p, id, req)
}

// With PassWorkers, one pass handles that many schedules at once, and every tick still
// gets its own run with the schedule's run key.
func TestPassHandlesSchedulesConcurrently(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	const n = 4
	w.clock.set(time.Date(2026, 4, 2, 12, 0, 30, 0, time.UTC))
	ids := make([]string, n)
	for i := range ids {
		ids[i] = w.schedule(t, "par"+string(rune('a'+i)), scheduling.CreateRequest{Cron: "* * * * *", Timezone: "UTC"})
	}
	b := &barrier{Templates: w.tpl, n: n, open: make(chan struct{})}
	svc := scheduling.New(scheduling.Deps{Store: w.st, Templates: b, Clock: w.clock.Now}, scheduling.Config{PassWorkers: n})
	w.clock.set(time.Date(2026, 4, 2, 12, 1, 30, 0, time.UTC))
	_, err := svc.Pass(w.ctx, w.epoch)
	require.NoError(t, err)
	at := time.Date(2026, 4, 2, 12, 1, 0, 0, time.UTC)
	for _, id := range ids {
		got := w.ticks(t, id)
		require.Len(t, got, 1, id)
		require.Equal(t, schedule.OutcomeCreated, got[0].status, id)
		list, err := w.st.List(w.ctx, runs.Filter{RunKey: schedule.RunKey(id, at)})
		require.NoError(t, err)
		require.Len(t, list, 1, "one run per tick")
	}
}

// A pass under a term that is no longer current ends with ErrLeaseLost and writes no
// tick, however many schedules it handles at once: each tick checks the fence itself.
func TestConcurrentPassIsFenced(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(time.Date(2026, 4, 2, 12, 0, 30, 0, time.UTC))
	ids := make([]string, 6)
	for i := range ids {
		ids[i] = w.schedule(t, "fenced"+string(rune('a'+i)), scheduling.CreateRequest{Cron: "* * * * *", Timezone: "UTC"})
	}
	svc := scheduling.New(scheduling.Deps{Store: w.st, Templates: w.tpl, Clock: w.clock.Now}, scheduling.Config{PassWorkers: 3})
	w.clock.set(time.Date(2026, 4, 2, 12, 1, 30, 0, time.UTC))
	_, err := svc.Pass(w.ctx, w.epoch-1)
	require.ErrorIs(t, err, run.ErrLeaseLost)
	for _, id := range ids {
		require.Empty(t, w.ticks(t, id), id)
	}
}
