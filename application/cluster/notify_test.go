package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

// fakeNotifications stands in for the LISTEN adapter.
type fakeNotifications struct {
	wake    chan struct{}
	cancels chan string
}

func newFakeNotifications() *fakeNotifications {
	return &fakeNotifications{wake: make(chan struct{}, 1), cancels: make(chan string)}
}

func (n *fakeNotifications) Wakeups() <-chan struct{} { return n.wake }
func (n *fakeNotifications) Cancels() <-chan string   { return n.cancels }

// noPolling makes the poll fallback too slow to matter, so only notifications act.
func noPolling(n cluster.Notifications) func(*cluster.Config, *cluster.Deps) {
	return func(c *cluster.Config, d *cluster.Deps) {
		c.PollInterval = time.Hour
		d.Notifications = n
	}
}

func TestWorkNotificationClaimsAtOnce(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	n := newFakeNotifications()
	h := start(t, store, &fakeRunner{fn: succeed(1)}, noPolling(n))
	h.steps.claims.reach(t, 1) // the claim loop claims once at start
	store.add(claimed("r1"))
	// The lease loop keeps cycling, but without a wake-up no claim pass follows the first
	// before the poll interval (an hour).
	h.steps.cycles.more(t, 2)
	require.Equal(t, 1, h.steps.claims.count(), "without a wake-up nothing claims before the poll interval")
	require.Zero(t, h.runner.started.Load())
	require.Equal(t, "pending", store.get("r1").Status)

	n.wake <- struct{}{}
	require.Equal(t, string(run.Completed), store.ended(t, "r1").Status)
}

func TestCancelNotificationFiresTheTokenAtOnce(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"), claimed("r2"))
	n := newFakeNotifications()
	h := start(t, store, &fakeRunner{fn: untilCancelled(7)}, noPolling(n))
	require.Eventually(t, func() bool { return h.member.InFlight() == 2 }, waitFor, tick)

	n.cancels <- "not-here" // another member's run: nothing happens here
	n.cancels <- "r1"
	rec := store.ended(t, "r1")
	require.Equal(t, string(run.Cancelled), rec.Status)
	require.EqualValues(t, 7, rec.Stats.RowsWritten)
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)
	require.Equal(t, "running", store.get("r2").Status, "only the named run stops")
}

func TestEmptyCancelNotificationRereadsEveryFlag(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"), claimed("r2"))
	n := newFakeNotifications()
	h := start(t, store, &fakeRunner{fn: untilCancelled(1)}, noPolling(n))
	require.Eventually(t, func() bool { return h.member.InFlight() == 2 }, waitFor, tick)

	_, err := store.RequestCancel(context.Background(), "r2") // its notification was lost
	require.NoError(t, err)
	n.cancels <- ""
	require.Equal(t, string(run.Cancelled), store.ended(t, "r2").Status)
	require.Equal(t, "running", store.get("r1").Status, "a run without a flag keeps running")
}

func TestStopEndsTheNotificationLoop(t *testing.T) {
	t.Parallel()
	n := newFakeNotifications()
	h := start(t, newHistory(t), &fakeRunner{fn: succeed(1)}, noPolling(n))
	h.member.Stop()
	// Stop returns after every loop has ended, so no reader is left: a send that
	// succeeds now went to a loop that outlived Stop.
	select {
	case n.cancels <- "r1":
		t.Fatal("a stopped member still reads notifications")
	default:
	}
}

// unserved stores runs of pool gpu, which the member under test does not serve; they
// were created long before the history's clock reads now (history.create).
func unserved(store *history, names map[string]string) {
	for id, name := range names {
		c := claimed(id)
		c.Name, c.Pool = name, "gpu"
		store.add(c)
	}
}

func TestPoolWaitTimeoutFailsRunsEveryLeaseCycle(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	unserved(store, map[string]string{"p1": "orders", "p2": "nightly"})
	h := start(t, store, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
		c.PoolWaitTimeout = 5 * time.Second
		d.PoolTimeouts = store
	})
	store.until(t, func() bool { return store.poolCallCount() >= 2 }, "two lease cycles failed unserved pools")
	store.mu.Lock()
	require.Equal(t, []time.Duration{300 * time.Millisecond, 5 * time.Second}, store.poolCalls[:2])
	store.mu.Unlock()
	for _, id := range []string{"p1", "p2"} {
		rec := store.get(id)
		require.Equal(t, string(run.Failed), rec.Status)
		require.Equal(t, string(run.CodePoolUnavailable), rec.ErrorCode)
	}
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	require.ElementsMatch(t, []string{"orders:failed/pool_unavailable", "nightly:failed/pool_unavailable"}, h.metrics.finished)
}

func TestPoolWaitTimeoutIsOffByDefaultAndWhileTheHistoryIsDown(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	unserved(store, map[string]string{"p1": "orders"})
	h := start(t, store, &fakeRunner{fn: succeed(1)}, func(_ *cluster.Config, d *cluster.Deps) { d.PoolTimeouts = store })
	h.steps.cycles.more(t, 3) // each lease cycle is where pools would time out
	require.Zero(t, store.poolCallCount(), "no --pool-wait-timeout-secs: runs wait forever")
	require.Equal(t, "pending", store.get("p1").Status)

	store2 := newHistory(t)
	unserved(store2, map[string]string{"p1": "orders"})
	store2.down.Store(true)
	h2 := start(t, store2, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
		c.PoolWaitTimeout = time.Second
		d.PoolTimeouts = store2
	})
	h2.steps.cycles.more(t, 3)
	require.Zero(t, store2.poolCallCount(), "a member whose heartbeat fails decides nothing for others")
	require.Equal(t, "pending", store2.get("p1").Status)
}

func TestNewRefusesABadPoolWaitTimeout(t *testing.T) {
	t.Parallel()
	cfg := cluster.Config{InstanceID: "m1", MaxConcurrent: 1, LeaseTTL: 3 * time.Second, PollInterval: time.Second}
	deps := cluster.Deps{Store: newHistory(t), Loader: &fakeLoader{}, Runner: &fakeRunner{}}

	c := cfg
	c.PoolWaitTimeout = -time.Second
	_, err := cluster.New(c, deps)
	require.ErrorContains(t, err, "--pool-wait-timeout-secs must not be negative")

	c.PoolWaitTimeout = time.Minute
	_, err = cluster.New(c, deps)
	require.ErrorContains(t, err, "--pool-wait-timeout-secs needs Deps.PoolTimeouts")

	d := deps
	d.PoolTimeouts = newHistory(t)
	_, err = cluster.New(c, d)
	require.NoError(t, err)
}

func TestHeartbeatCarriesTheWholeRow(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	r1 := claimed("r1")
	r1.Pool = "gpu"
	store.add(r1)
	h := start(t, store, &fakeRunner{fn: untilCancelled(1)}, func(c *cluster.Config, _ *cluster.Deps) {
		c.Pools = []string{"gpu"}
		c.StateFormatMax = 2
		c.VaultFormatMax = 1
	})
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)
	var hb cluster.MemberRow
	store.until(t, func() bool { hb = store.memberRow("m1").MemberRow; return hb.InFlight == 1 },
		"the lease cycle heartbeats the in-flight count")
	row := h.member.Row()
	require.False(t, row.StartedAt.IsZero())
	require.True(t, hb.StartedAt.Equal(row.StartedAt.Truncate(time.Millisecond)) || hb.StartedAt.Equal(row.StartedAt),
		"stored %s, member %s", hb.StartedAt, row.StartedAt)
	hb.StartedAt = row.StartedAt
	require.Equal(t, cluster.MemberRow{InstanceID: "m1", Host: "host", PID: 42, Listen: "127.0.0.1:8080",
		Version: "test", Pools: []string{"gpu"}, MaxConcurrent: 4, InFlight: 1, StateFormatMax: 2,
		VaultFormatMax: 1, StartedAt: row.StartedAt}, hb)
	require.Equal(t, hb, row)

	go func() { _ = h.member.Drain(context.Background()) }()
	store.until(t, func() bool { return store.memberRow("m1").Draining }, "a drain is announced in the row at once")
}

func TestStateFormatDefaultsToWhatThisBinaryReads(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	h := start(t, store, &fakeRunner{fn: succeed(1)}, nil)
	require.Equal(t, state.FormatMax, h.member.Row().StateFormatMax,
		"a member advertising 0 would be read as format 1 and refuse every incremental submission")
	require.Equal(t, state.FormatMax, store.memberRow("m1").StateFormatMax)
}
