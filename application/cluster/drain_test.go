package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
)

// requireHandedBack checks that run id was handed back with its rows, its attempt
// closed as handed back and not spent: a hand-back is no failure. (The member may have
// claimed it again since.)
func requireHandedBack(t *testing.T, store *history, id string, rows int64) {
	t.Helper()
	p, ok := store.handBack(id)
	require.True(t, ok, "run %s was not handed back", id)
	require.Equal(t, rows, p.RowsWritten)
	rec := store.get(id)
	require.NotEmpty(t, rec.Attempts)
	require.Equal(t, run.Outcome("handed_back"), rec.Attempts[0].Outcome)
	spent := 0
	for _, a := range rec.Attempts {
		if a.Outcome != run.OutcomeHandedBack {
			spent++
		}
	}
	require.Equal(t, spent, rec.Attempt, "a hand-back spends no attempt")
	_, fin := store.outcome(id)
	require.False(t, fin, "a handed-back run is not finished")
}

func TestDrainHandsBackAfterTheGraceWithoutSpendingAttempts(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"), claimed("r2"))
	runner := &fakeRunner{fn: untilCancelled(12)}
	grace := 150 * time.Millisecond
	h := start(t, store, runner, func(c *cluster.Config, _ *cluster.Deps) { c.ShutdownGrace = grace })
	require.Eventually(t, func() bool { return h.member.InFlight() == 2 }, waitFor, tick)

	begin := time.Now()
	require.NoError(t, h.member.Drain(context.Background()))
	// A lower bound only: the runs are stopped no sooner than the grace allows.
	require.GreaterOrEqual(t, time.Since(begin), grace, "in-flight runs get the whole grace")
	require.True(t, h.member.Draining())
	require.Zero(t, h.member.InFlight())
	requireHandedBack(t, store, "r1", 12)
	requireHandedBack(t, store, "r2", 12)

	// Draining claims nothing more, and the membership row says so: the claim loop has
	// ended (Drain waited for it), so neither a wake-up nor the lease cycles that follow
	// make another claim pass.
	passes := h.steps.claims.count()
	store.add(claimed("r3"))
	h.member.Wake()
	h.steps.cycles.more(t, 2)
	require.Equal(t, passes, h.steps.claims.count(), "a draining member made a claim pass")
	require.EqualValues(t, 2, runner.started.Load())
	require.Equal(t, "pending", store.get("r3").Status)
	require.True(t, store.memberRow("m1").Draining)
}

func TestRunFinishingWithinTheGraceCompletes(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	release := make(chan struct{})
	runner := &fakeRunner{fn: func(ctx context.Context, _ execute.Job) (execute.Stats, error) {
		select {
		case <-release:
			return execute.Stats{RowsWritten: 9}, nil
		case <-ctx.Done():
			return execute.Stats{}, ctx.Err()
		}
	}}
	h := start(t, store, runner, func(c *cluster.Config, _ *cluster.Deps) { c.ShutdownGrace = time.Hour })
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)

	drained := make(chan error, 1)
	go func() { drained <- h.member.Drain(context.Background()) }()
	// The run finishes on its own once the drain has begun, well within the grace.
	require.Eventually(t, h.member.Draining, waitFor, tick)
	close(release)
	require.NoError(t, <-drained)
	rec := store.get("r1")
	require.Equal(t, string(run.Completed), rec.Status)
	require.EqualValues(t, 9, rec.Stats.RowsWritten)
	require.Zero(t, store.handBackCalls.Load())
}

func TestDrainWithZeroGraceHandsBackAtOnce(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	h := start(t, store, &fakeRunner{fn: untilCancelled(4)}, func(c *cluster.Config, _ *cluster.Deps) {
		c.ShutdownGrace = 0
	})
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)
	// The run only stops when its token fires, so Drain returning at all proves the
	// zero grace stopped it at once rather than waiting for it to end.
	require.NoError(t, h.member.Drain(context.Background()))
	requireHandedBack(t, store, "r1", 4)
}

func TestSecondDrainSkipsTheGrace(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	h := start(t, store, &fakeRunner{fn: untilCancelled(1)}, func(c *cluster.Config, _ *cluster.Deps) {
		c.ShutdownGrace = time.Hour
	})
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)

	first := make(chan error, 1)
	go func() { first <- h.member.Drain(context.Background()) }()
	require.Eventually(t, h.member.Draining, waitFor, tick)
	require.NoError(t, h.member.Drain(context.Background()))
	require.NoError(t, <-first)
	requireHandedBack(t, store, "r1", 1)
}

func TestDrainContextEndSkipsTheGrace(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	h := start(t, store, &fakeRunner{fn: untilCancelled(1)}, func(c *cluster.Config, _ *cluster.Deps) {
		c.ShutdownGrace = time.Hour
	})
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- h.member.Drain(ctx) }()
	require.Eventually(t, h.member.Draining, waitFor, tick)
	cancel() // the caller gives up on the hour of grace
	require.NoError(t, <-drained)
	requireHandedBack(t, store, "r1", 1)
}

func TestDrainAbandonsRunsThatDoNotStopWithinTheKillTimeout(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	release := make(chan struct{})
	runner := &fakeRunner{fn: func(context.Context, execute.Job) (execute.Stats, error) {
		<-release // ignores its token
		return execute.Stats{}, context.Canceled
	}}
	h := start(t, store, runner, func(c *cluster.Config, _ *cluster.Deps) {
		c.ShutdownGrace = 0
		c.ShutdownKill = 50 * time.Millisecond
	})
	t.Cleanup(func() { close(release) })
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)

	err := h.member.Drain(context.Background())
	require.ErrorContains(t, err, "--shutdown-kill-secs")
	require.ErrorContains(t, err, "1 run(s)")
	require.Zero(t, store.finishCalls.Load()+store.handBackCalls.Load(), "an abandoned run writes nothing")
	require.Equal(t, "running", store.get("r1").Status)
}

func TestStopWithoutDrainHandsBackWhatRuns(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	// A long TTL: the stop's history writes are bounded by TTL/6, and the harness's
	// 300 ms TTL gave MarkStopped 50 ms, which a loaded CI machine under -race exceeded.
	h := start(t, store, &fakeRunner{fn: untilCancelled(6)}, func(c *cluster.Config, _ *cluster.Deps) {
		c.LeaseTTL = time.Hour
	})
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)
	h.member.Stop()
	requireHandedBack(t, store, "r1", 6)
	require.False(t, store.memberRow("m1").StoppedAt.IsZero())
}
