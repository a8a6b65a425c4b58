package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
)

// stoppable runs until its token fires and reports that on stopped.
func stoppable(rows int64, stopped chan<- struct{}) func(ctx context.Context, job execute.Job) (execute.Stats, error) {
	inner := untilCancelled(rows)
	var once sync.Once // a run handed back may be claimed and stopped again
	return func(ctx context.Context, job execute.Job) (execute.Stats, error) {
		s, err := inner(ctx, job)
		once.Do(func() { close(stopped) })
		return s, err
	}
}

func TestLeaseLostAtRenewalStopsTheRunAndDiscardsIt(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	stopped := make(chan struct{})
	h := start(t, store, &fakeRunner{fn: stoppable(5, stopped)}, nil)
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)
	store.steal("r1")

	select {
	case <-stopped:
	case <-time.After(waitFor):
		t.Fatal("the run was not stopped after its lease was lost")
	}
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)
	rec := store.get("r1")
	require.Equal(t, "running", rec.Status)
	require.Equal(t, peerOwner.InstanceID, rec.Owner, "the run stays the peer's")
	require.Zero(t, store.finishCalls.Load(), "a lost run's result is discarded")
	require.Zero(t, store.handBackCalls.Load(), "a lost run is not ours to hand back")
}

func TestRenewalRenewsHeldRunsAndReclaims(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	h := start(t, store, &fakeRunner{fn: untilCancelled(1)}, nil)
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)
	before := store.memberRow("m1").HeartbeatAt
	h.steps.cycles.more(t, 3) // the first may have begun before the claim
	store.mu.Lock()
	renews, reclaims := store.renewCalls, store.reclaims
	store.mu.Unlock()
	require.GreaterOrEqual(t, renews, 2)
	require.GreaterOrEqual(t, reclaims, 2)
	require.True(t, store.memberRow("m1").HeartbeatAt.After(before), "each cycle heartbeats")
	require.Equal(t, "running", store.get("r1").Status)
	require.True(t, h.member.Healthy())
}

func TestOutageStopsRunsAtTheCutoffAndHandsThemBackAfterRecovery(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	stopped := make(chan struct{})
	// TTL 300 ms: renewals every 100 ms (real time); the cutoff, 200 ms, is measured on the
	// fake clock so the test decides when it has passed. The history holds the lease for
	// an hour (heldLease), so the outage ends before the lease does.
	h := start(t, store, &fakeRunner{fn: stoppable(8, stopped)}, nil)
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)

	store.down.Store(true)
	require.Eventually(t, h.metrics.failing, waitFor, tick, "renewals fail")
	require.False(t, h.member.Healthy())
	// A claim decided just before the failure may still land; the pass after the next
	// one started with the member already unhealthy.
	h.steps.claims.more(t, 2)
	claims := store.claimAttempts.Load()
	store.add(claimed("r2"))
	h.member.Wake()

	// Just short of the cutoff the run keeps going, whatever number of renewals fail:
	// several failed lease cycles, outage checks and claim passes later it still runs.
	h.clock.Advance(199 * time.Millisecond)
	h.steps.cycles.more(t, 3)
	h.steps.checks.more(t, 3)
	h.steps.claims.more(t, 3)
	select {
	case <-stopped:
		t.Fatal("the run was stopped before the outage cutoff")
	default:
	}
	require.Equal(t, claims, store.claimAttempts.Load(), "a member whose renewals fail never claims")

	// At the cutoff (2/3 of the TTL, before the lease could expire) every run stops.
	h.clock.Advance(time.Millisecond)
	select {
	case <-stopped:
	case <-time.After(waitFor):
		t.Fatal("the run was not stopped at the outage cutoff")
	}
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)
	require.Equal(t, "running", store.get("r1").Status, "nothing can be written while the history is down")

	store.down.Store(false)
	store.until(t, func() bool { return store.handedBack("r1") }, "r1 handed back")
	requireHandedBack(t, store, "r1", 8)
	require.Eventually(t, h.member.Healthy, waitFor, tick)
	store.until(t, func() bool { return store.get("r2").Status == "running" }, "claiming resumes once the history answers")
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	require.Contains(t, h.metrics.unreachable, true)
	require.False(t, h.metrics.unreachable[len(h.metrics.unreachable)-1])
}

func TestOutageRunAlreadyReclaimedByAPeerIsDropped(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	stopped := make(chan struct{})
	h := start(t, store, &fakeRunner{fn: stoppable(1, stopped)}, nil)
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)

	store.down.Store(true)
	require.Eventually(t, h.metrics.failing, waitFor, tick, "renewals fail")
	require.False(t, h.member.Healthy())
	h.clock.Advance(time.Second)
	receive(t, stopped, "the run stops at the outage cutoff")
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)

	store.steal("r1") // a peer reclaimed it meanwhile
	store.down.Store(false)
	require.Eventually(t, func() bool { return store.handBackCalls.Load() == 1 }, waitFor, tick)
	require.Eventually(t, h.member.Healthy, waitFor, tick)
	h.steps.cycles.more(t, 3) // healthy lease cycles, each of which would retry a parked hand-back
	require.EqualValues(t, 1, store.handBackCalls.Load(), "a run a peer reclaimed is not handed back again")
	require.Zero(t, store.finishCalls.Load())
	require.Equal(t, peerOwner.InstanceID, store.get("r1").Owner, "the peer's run is left alone")
}

func TestOutageCutoffHoldsWhileTheLeaseLoopIsStuck(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	stopped := make(chan struct{})
	h := start(t, store, &fakeRunner{fn: stoppable(3, stopped)}, nil)
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)

	store.down.Store(true)
	require.Eventually(t, h.metrics.failing, waitFor, tick, "renewals fail")
	require.False(t, h.member.Healthy())
	// The history now swallows statements: the lease loop's next try never returns, so
	// only the outage watch can keep the cutoff.
	stall := make(chan struct{})
	var release sync.Once
	unstall := func() { release.Do(func() { close(stall) }) }
	t.Cleanup(unstall) // runs before the member's Stop
	store.stall.Store(&stall)
	store.stalled.reach(t, 1) // the lease loop is stuck in a statement now

	h.clock.Advance(time.Second)
	select {
	case <-stopped:
	case <-time.After(waitFor):
		t.Fatal("the run was not stopped at the outage cutoff while a statement hung")
	}
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)

	store.stall.Store(nil)
	unstall()
	store.down.Store(false)
	store.until(t, func() bool { return store.handedBack("r1") }, "handed back once the history answers")
}
