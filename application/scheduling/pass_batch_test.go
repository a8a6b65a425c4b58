package scheduling_test

import (
	"context"
	"fmt"
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

// batches records the size of every batch the pass hands to the funnel.
type batches struct {
	scheduling.TickSubmitter
	mu    sync.Mutex
	sizes []int
}

func (b *batches) SubmitTicks(ctx context.Context, reqs []runs.SubmitRequest) ([]runs.SubmitResult, []error, error) {
	b.mu.Lock()
	b.sizes = append(b.sizes, len(reqs))
	b.mu.Unlock()
	return b.TickSubmitter.SubmitTicks(ctx, reqs)
}

func (b *batches) took() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.sizes
	b.sizes = nil
	return out
}

// listings counts how often the pass reads every schedule.
type listings struct {
	scheduling.Store
	mu sync.Mutex
	n  int
}

func (l *listings) ListSchedules(ctx context.Context) ([]*scheduling.Schedule, error) {
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
	return l.Store.ListSchedules(ctx)
}

func (l *listings) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// A pass creates the due ticks of many schedules in batches of Config.TickBatch, one run
// per tick, each recorded with its run.
func TestPassCreatesTicksInBatches(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(time.Date(2026, 4, 2, 12, 0, 30, 0, time.UTC))
	ids := w.perMinute(t, "batch", 7)
	b := &batches{TickSubmitter: w.rs}
	svc := scheduling.New(scheduling.Deps{Store: w.st, Templates: w.tpl, Ticks: b, Clock: w.clock.Now}, scheduling.Config{TickBatch: 3})
	w.clock.set(time.Date(2026, 4, 2, 12, 1, 30, 0, time.UTC))
	_, err := svc.Pass(w.ctx, w.epoch)
	require.NoError(t, err)
	require.Equal(t, []int{3, 3, 1}, b.took(), "7 ticks in batches of 3")
	at := time.Date(2026, 4, 2, 12, 1, 0, 0, time.UTC)
	for _, id := range ids {
		got := w.ticks(t, id)
		require.Len(t, got, 1, id)
		require.Equal(t, schedule.OutcomeCreated, got[0].status, id)
		list, err := w.st.List(w.ctx, runs.Filter{RunKey: schedule.RunKey(id, at)})
		require.NoError(t, err)
		require.Len(t, list, 1, "one run per tick")
		require.Equal(t, "pending", list[0].Status)
	}
}

// Catch-up ticks of one schedule share a batch, and each is decided as if created one
// after the other: skip creates the first and skips the rest behind it, queue queues them.
func TestPassDecidesOverlapWithinABatch(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(time.Date(2026, 4, 2, 12, 0, 30, 0, time.UTC))
	skip := w.schedule(t, "catchskip", scheduling.CreateRequest{Cron: "* * * * *", Timezone: "UTC", Catchup: true, MaxCatchupRuns: intp(3)})
	queue := w.schedule(t, "catchqueue", scheduling.CreateRequest{Cron: "* * * * *", Timezone: "UTC", Catchup: true,
		MaxCatchupRuns: intp(3), Overlap: "queue"})
	b := &batches{TickSubmitter: w.rs}
	svc := scheduling.New(scheduling.Deps{Store: w.st, Templates: w.tpl, Ticks: b, Clock: w.clock.Now}, scheduling.Config{})
	w.clock.set(time.Date(2026, 4, 2, 12, 3, 30, 0, time.UTC))
	_, err := svc.Pass(w.ctx, w.epoch)
	require.NoError(t, err)
	require.Equal(t, []int{6}, b.took(), "one batch")
	require.Equal(t, []tickLine{
		{"2026-04-02T12:01:00Z", schedule.OutcomeCreated, ""},
		{"2026-04-02T12:02:00Z", schedule.OutcomeSkipped, schedule.ReasonOverlap},
		{"2026-04-02T12:03:00Z", schedule.OutcomeSkipped, schedule.ReasonOverlap},
	}, w.ticks(t, skip))
	require.Equal(t, []tickLine{
		{"2026-04-02T12:01:00Z", schedule.OutcomeCreated, ""},
		{"2026-04-02T12:02:00Z", schedule.OutcomeQueued, ""},
		{"2026-04-02T12:03:00Z", schedule.OutcomeQueued, ""},
	}, w.ticks(t, queue))
}

// A batch under a term that is no longer current stores nothing.
func TestBatchedPassIsFenced(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(time.Date(2026, 4, 2, 12, 0, 30, 0, time.UTC))
	ids := w.perMinute(t, "stale", 4)
	w.clock.set(time.Date(2026, 4, 2, 12, 1, 30, 0, time.UTC))
	_, err := w.svc.Pass(w.ctx, w.epoch-1)
	require.ErrorIs(t, err, run.ErrLeaseLost)
	for _, id := range ids {
		require.Empty(t, w.ticks(t, id), id)
	}
	_, err = w.svc.Pass(w.ctx, w.epoch)
	require.NoError(t, err, "the current term creates them")
	for _, id := range ids {
		require.Len(t, w.ticks(t, id), 1, id)
	}
}

// The leader reads every schedule once and then again only when they changed (here or on
// another member), the term is new, or Config.Reload passed; in between, each schedule's
// ticks start after the ones the pass recorded.
func TestPassLoadsSchedulesIncrementally(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(time.Date(2026, 4, 2, 12, 0, 30, 0, time.UTC))
	id := w.schedule(t, "inc", scheduling.CreateRequest{Cron: "* * * * *", Timezone: "UTC"})
	spy := &listings{Store: w.st}
	b := &batches{TickSubmitter: w.rs}
	svc := scheduling.New(scheduling.Deps{Store: spy, Templates: w.tpl, Ticks: b, Clock: w.clock.Now},
		scheduling.Config{Reload: 10 * time.Minute})
	pass := func(epoch int64) {
		t.Helper()
		_, err := svc.Pass(w.ctx, epoch)
		require.NoError(t, err)
	}
	w.clock.set(time.Date(2026, 4, 2, 12, 1, 30, 0, time.UTC))
	pass(w.epoch)
	require.Equal(t, 1, spy.count())
	w.clock.add(time.Minute)
	pass(w.epoch)
	require.Equal(t, 1, spy.count(), "nothing changed: no reading")
	require.Equal(t, []int{1, 1}, b.took(), "the copy's last tick moved on: 12:01 is not submitted again")
	require.Len(t, w.ticks(t, id), 2)

	w.schedule(t, "inc2", scheduling.CreateRequest{Cron: "* * * * *", Timezone: "UTC"}) // through another service
	pass(w.epoch)
	require.Equal(t, 2, spy.count(), "a schedule added elsewhere is seen")

	_, err := svc.Pause(w.ctx, admin, id)
	require.NoError(t, err)
	pass(w.epoch)
	require.Equal(t, 3, spy.count(), "its own change")

	lease, err := w.st.Elector(false).Campaign(w.ctx, scheduling.Candidate{InstanceID: "next", Host: "h", PID: 2, Version: "t", TTL: time.Minute})
	require.NoError(t, err)
	pass(lease.Epoch())
	require.Equal(t, 4, spy.count(), "a new term")

	w.clock.add(10 * time.Minute)
	pass(lease.Epoch())
	require.Equal(t, 5, spy.count(), "the safety net")
	pass(lease.Epoch())
	require.Equal(t, 5, spy.count())
	ticks := w.ticks(t, id)
	require.Equal(t, schedule.ReasonPaused, ticks[len(ticks)-1].reason, "paused ticks are recorded from the copy too")
}

// perMinute registers n templates named prefix + a letter, each with a per-minute schedule.
func (w *world) perMinute(t *testing.T, prefix string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = w.schedule(t, fmt.Sprintf("%s%c", prefix, 'a'+i), scheduling.CreateRequest{Cron: "* * * * *", Timezone: "UTC"})
	}
	return ids
}

// A burst beyond --max-queued-runs: the funnel refuses the surplus ticks inside their
// batch and they are recorded skipped with the reason, while the rest of the batch is
// created (README: raise the flag above the schedules due at once).
func TestBatchRecordsTicksTheQueueLimitRefuses(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(time.Date(2026, 4, 2, 12, 0, 30, 0, time.UTC))
	ids := w.perMinute(t, "full", 4)
	rs := runs.New(runs.Deps{Store: w.st, Loader: w.load, Clock: w.clock}, runs.Config{MaxQueued: 2})
	tpl := templates.New(templates.Deps{Store: w.st, Runs: rs, Loader: w.load, Clock: w.clock.Now})
	b := &batches{TickSubmitter: rs}
	svc := scheduling.New(scheduling.Deps{Store: w.st, Templates: tpl, Ticks: b, Clock: w.clock.Now}, scheduling.Config{})
	w.clock.set(time.Date(2026, 4, 2, 12, 1, 30, 0, time.UTC))
	_, err := svc.Pass(w.ctx, w.epoch)
	require.NoError(t, err)
	require.Equal(t, []int{4}, b.took(), "one batch")
	created, refused := 0, 0
	for _, id := range ids {
		got := w.ticks(t, id)
		require.Len(t, got, 1, id)
		switch got[0].status {
		case schedule.OutcomeCreated:
			created++
		case schedule.OutcomeSkipped:
			require.Contains(t, got[0].reason, "queue", id)
			refused++
		}
	}
	require.Equal(t, 2, created, "up to the limit")
	require.Equal(t, 2, refused, "the surplus is recorded skipped")
}
