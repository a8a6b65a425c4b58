package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// Cluster Mode A end to end (SPEC §4, §5): real `sluice serve --cluster` processes on
// loopback ports sharing one PostgreSQL history. Leases are short (3-9 s) so failover
// happens within seconds; every wait is bounded.

// clusterConfig is the shared configuration of a test's members.
func clusterConfig(history string, ttl int) e2e.MemberConfig {
	return e2e.MemberConfig{History: history, LeaseTTLSecs: ttl, PollSecs: 1, MaxConcurrent: 4,
		Timeout: 3 * time.Minute}
}

// runningOn accepts a run executing on the member with instance id.
func runningOn(id string) func(e2e.RunResource) bool {
	return func(r e2e.RunResource) bool {
		return r.Status == "running" && r.Owner != nil && r.Owner.InstanceID == id
	}
}

func terminal(r e2e.RunResource) bool { return r.Terminal() }

// requireNoOverlap fails when two attempts of the run held it at the same time.
func requireNoOverlap(t *testing.T, r e2e.RunResource) {
	t.Helper()
	require.Empty(t, e2e.Overlapping(r.Attempts), "run %s was held by two members at once: %+v", r.RunID, r.Attempts)
}

// membersSum is metricSum over the /metrics of each member given.
func membersSum(t *testing.T, members []*e2e.Member, name string, labels ...string) float64 {
	t.Helper()
	var sum float64
	for _, m := range members {
		sum += metricSum(m.Metrics(t), name, labels...)
	}
	return sum
}

// metricSum adds up the samples of a metric whose label text contains every label given
// (e.g. `outcome="requeued"`).
func metricSum(text, name string, labels ...string) float64 {
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `(\{[^}]*\})?\s+(\S+)$`)
	var sum float64
	for _, line := range strings.Split(text, "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(m[1], l)
		}
		if v, err := strconv.ParseFloat(m[2], 64); err == nil && ok {
			sum += v
		}
	}
	return sum
}

// (a) kill -9 of a member mid-way: every run still completes, once at a time.
func TestClusterKillNineLosesNoRun(t *testing.T) {
	t.Parallel()
	c := e2e.StartCluster(t, 3, clusterConfig(testdb.Postgres(t), 3), nil)
	victim := c.Members[0]
	const total = 200
	ids := make([]string, 0, total)
	submit := func(m *e2e.Member, i int) {
		// 10 rows at 50 rows/s: about 0.2 s each, so a member always has some in flight.
		ids = append(ids, m.MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig(fmt.Sprintf("burn-%d", i), 10, 50)}))
	}
	for i := range total / 2 {
		submit(c.Members[i%3], i)
	}
	// Nine 10 s runs, one more than the two others can hold at once (4 each): the victim
	// is sure to hold one long enough for its in-flight count to show, however slow the
	// machine (the 0.2 s runs alone could all end between two looks).
	for i := range 9 {
		ids = append(ids, c.Members[i%3].MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig(fmt.Sprintf("long-%d", i), 200, 20)}))
	}
	require.Eventually(t, func() bool { return victim.InFlight() > 0 }, 60*time.Second, 10*time.Millisecond,
		"the victim executes runs")
	victim.Kill(t)
	killed := time.Now()
	for i := total / 2; i < total; i++ {
		submit(c.Members[1+i%2], i)
	}

	runs := c.WaitTerminal(t, ids, 90*time.Second)
	// Every attempt but the last was lost (its member stopped answering, and a peer
	// reclaimed it) or handed back (its member's renewals stalled past the outage cutoff,
	// which a loaded machine can cause for a survivor too; a hand-back spends no attempt).
	lost, victimLost := 0, 0
	for _, id := range ids {
		r := runs[id]
		require.Equal(t, "completed", r.Status, "run %s: %+v", id, r.Error)
		requireNoOverlap(t, r)
		out := r.Outcomes()
		require.Equal(t, "completed", out[len(out)-1])
		handedBack := 0
		for i, o := range out[:len(out)-1] {
			switch o {
			case "handed_back":
				handedBack++
			case "lost":
				lost++
				if r.Attempts[i].InstanceID == victim.InstanceID(t) {
					require.True(t, r.Attempts[i+1].ClaimedAt.After(killed), "run %s: reclaimed after the kill, not before", id)
					victimLost++
				}
			default:
				t.Fatalf("run %s: attempt %d ended %q: only a lost or handed-back attempt precedes the one that completed", id, i+1, o)
			}
		}
		require.Equal(t, len(out)-handedBack, r.Attempt, "run %s: a hand-back spends no attempt: %+v", id, r.Attempts)
	}
	require.Positive(t, victimLost, "the victim was killed with runs in flight, and they were reclaimed")
	// The reclaim's transaction requeues a run before its member counts it, so a peer may
	// complete the run a moment before the count shows: wait for it.
	awaitMetric(t, float64(lost), func() float64 {
		return membersSum(t, c.Members[1:], "sluice_serve_runs_reclaimed_total", `outcome="requeued"`)
	}, "sluice_serve_runs_reclaimed_total counts each reclaim once")
	t.Logf("%d runs completed; %d attempts were reclaimed, %d of them the killed member's", total, lost, victimLost)
}

// (b) A member paused past its TTL: a peer reclaims the run, and the paused member's late
// writes are refused by fencing when it wakes, so it stops the run.
func TestClusterPausedMemberIsFenced(t *testing.T) {
	t.Parallel()
	c := e2e.StartCluster(t, 1, clusterConfig(testdb.Postgres(t), 3), nil)
	m0 := c.Members[0]
	const rows = 40
	id := m0.MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("paused", rows, 10)})
	m0.WaitRun(t, id, time.Minute, "running on m0", runningOn(m0.InstanceID(t)))
	m1 := c.Add(t, nil)

	m0.Pause(t)
	r := m1.WaitRun(t, id, time.Minute, "reclaimed and claimed by m1", runningOn(m1.InstanceID(t)))
	require.Equal(t, 2, r.Attempt)
	require.Equal(t, []string{"lost", ""}, r.Outcomes())
	m0.Resume(t)

	// Awake, m0 learns at its first fenced write (renewal, progress or finish) that the
	// lease is gone, stops the run and discards whatever it had.
	require.Eventually(t, func() bool {
		for _, l := range m0.Logs() {
			if l.RunID == id && strings.Contains(l.Msg, "lease lost") {
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "m0 reports the lost lease:\n%s", m0.Stderr())
	require.Eventually(t, func() bool { return m0.InFlight() == 0 }, time.Minute, 50*time.Millisecond)

	final := m1.WaitRun(t, id, 30*time.Second, "terminal", terminal)
	require.Equal(t, "completed", final.Status)
	require.Equal(t, []string{"lost", "completed"}, final.Outcomes())
	require.Equal(t, m0.InstanceID(t), final.Attempts[0].InstanceID)
	require.Equal(t, m1.InstanceID(t), final.Attempts[1].InstanceID)
	require.EqualValues(t, rows, final.Stats.RowsWritten, "the final state is the peer's")
	requireNoOverlap(t, final)
	for _, l := range m0.Logs() {
		require.False(t, l.RunID == id && l.Msg == "run finished", "m0 never finished the run: %s", l.Msg)
	}
}

// (c) The link between a member and PostgreSQL is cut: /readyz answers 503 and
// submissions fail with history_unavailable, its runs are stopped before their leases can
// expire, and they are handed back (no attempt spent) once the link returns.
func TestClusterHistoryOutageHandsRunsBack(t *testing.T) {
	t.Parallel()
	history := testdb.Postgres(t)
	proxy := e2e.NewProxy(t, e2e.ProxyTarget(t, history))
	const ttl = 9
	c := e2e.StartCluster(t, 1, clusterConfig(proxy.URL(t, history), ttl), nil)
	m0 := c.Members[0]
	// m1 reads the history past the proxy. It starts before the runs and serves another
	// pool, so the runs are m0's alone and the link is cut as soon as they run: started
	// after them, a slow start-up beside a second CI let 6 s runs end before the cut, and
	// their leases expired while m0 retried the finish.
	m1 := c.Add(t, func(cfg *e2e.MemberConfig) { cfg.History, cfg.Pools = history, []string{"observer"} })
	ids := []string{
		// 20 s each: still running at m0's outage cutoff, under the 9 s TTL after the cut.
		m0.MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("outage-1", 200, 10)}),
		m0.MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("outage-2", 200, 10)}),
	}
	for _, id := range ids {
		m0.WaitRun(t, id, time.Minute, "running on m0", runningOn(m0.InstanceID(t)))
	}

	proxy.Cut()
	cut := time.Now()
	require.Eventually(t, func() bool {
		status, r := m0.Ready(t)
		return status == http.StatusServiceUnavailable && !r.HistoryOK
	}, time.Minute, 20*time.Millisecond, "/readyz answers 503 once the history is cut")
	status, sub := m0.Submit(t, e2e.SubmitRequest{Config: e2e.QuickConfig("during-outage", 1)})
	require.Equal(t, http.StatusServiceUnavailable, status, "%+v", sub.Error)
	require.Equal(t, "history_unavailable", sub.Error.Code)
	require.Eventually(t, func() bool {
		return metricSum(m0.Metrics(t), "sluice_serve_history_unreachable") == 1
	}, time.Minute, 50*time.Millisecond)

	// The event, not the test's clock: m0 says it stopped its runs and how long after its
	// last renewal was sent (its monotonic clock). That must be under the TTL, so the leases
	// still hold when the runs stop; the test's own polling may lag on a loaded machine.
	line := m0.WaitLog(t, "past the outage cutoff", 60*time.Second)
	since, ok := line.Raw["since_last_renewal"].(float64)
	require.True(t, ok, "the stop line carries since_last_renewal: %v", line.Raw)
	require.Less(t, time.Duration(since), ttl*time.Second, "m0 stopped its runs before their leases could expire")
	require.Eventually(t, func() bool { return m0.InFlight() == 0 }, 30*time.Second, 20*time.Millisecond,
		"m0 reports no run in flight once it has stopped them")
	stopped := time.Now()
	// Nobody has reclaimed them: their leases still hold, so no peer runs them yet.
	for _, id := range ids {
		r := m1.GetRun(t, id)
		require.Equal(t, "running", r.Status)
		require.Equal(t, m0.InstanceID(t), r.Owner.InstanceID, "the lease is still m0's when m0 has stopped")
	}
	t.Logf("runs stopped %s after the cut", stopped.Sub(cut).Round(time.Millisecond))
	proxy.Restore()

	for _, id := range ids {
		final := m1.WaitRun(t, id, 2*time.Minute, "terminal", terminal)
		require.Equal(t, "completed", final.Status)
		require.Equal(t, []string{"handed_back", "completed"}, final.Outcomes())
		require.Equal(t, 1, final.Attempt, "the hand-back spent no attempt")
		require.Equal(t, 1, final.Attempts[1].N)
		require.True(t, final.Attempts[1].ClaimedAt.After(stopped), "claimed again only after m0 stopped it")
		requireNoOverlap(t, final)
	}
	m0.WaitReady(t, time.Minute)
	require.Zero(t, metricSum(m0.Metrics(t), "sluice_serve_history_unreachable"))
}

// (d) SIGTERM drains: draining in /readyz and in the member row, 503 to submissions, and
// runs still executing after the grace are handed back and finished by the others.
func TestClusterDrainHandsRunsToPeers(t *testing.T) {
	t.Parallel()
	history := testdb.Postgres(t)
	cfg := clusterConfig(history, 5)
	cfg.ShutdownGraceSecs, cfg.ShutdownKillSecs = e2e.Secs(2), e2e.Secs(10)
	c := e2e.StartCluster(t, 1, cfg, nil)
	m0 := c.Members[0]
	ids := []string{
		// 15 s each: still running when m0 drains after two more members have started,
		// which takes seconds on a loaded machine (5 s runs finished before the drain).
		m0.MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("drain-1", 300, 20)}),
		m0.MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("drain-2", 300, 20)}),
	}
	for _, id := range ids {
		m0.WaitRun(t, id, time.Minute, "running on m0", runningOn(m0.InstanceID(t)))
	}
	m1, m2 := c.Add(t, nil), c.Add(t, nil)
	for _, id := range ids {
		require.Equal(t, "running", m0.GetRun(t, id).Status, "the run must still be running when m0 drains")
	}

	m0.Term(t)
	require.Eventually(t, func() bool {
		status, r := m0.Ready(t)
		return status == http.StatusServiceUnavailable && r.Draining
	}, time.Minute, 20*time.Millisecond)
	status, sub := m0.Submit(t, e2e.SubmitRequest{Config: e2e.QuickConfig("while-draining", 1)})
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, "draining", sub.Error.Code)
	conn, err := pgx.Connect(context.Background(), history)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	require.Eventually(t, func() bool {
		var draining bool
		err := conn.QueryRow(context.Background(),
			"SELECT draining FROM sluice_members WHERE instance_id = $1", m0.InstanceID(t)).Scan(&draining)
		return err == nil && draining
	}, 5*time.Second, 20*time.Millisecond, "the member row says draining, so peers stop counting it")

	res := m0.Wait(t)
	require.Equal(t, 0, res.Code, res.String())
	peers := []string{m1.InstanceID(t), m2.InstanceID(t)}
	for _, id := range ids {
		final := m1.WaitRun(t, id, 90*time.Second, "terminal", terminal)
		require.Equal(t, "completed", final.Status)
		require.Equal(t, []string{"handed_back", "completed"}, final.Outcomes())
		require.Equal(t, m0.InstanceID(t), final.Attempts[0].InstanceID)
		require.Contains(t, peers, final.Attempts[1].InstanceID, "finished by the others")
		require.Equal(t, 1, final.Attempt, "the hand-back spent no attempt")
		require.Equal(t, 1, final.Attempts[1].N)
		requireNoOverlap(t, final)
	}
}

// (e) Cancel through a member that does not own the run: the flag and NOTIFY reach the
// owner in milliseconds; a pending run is cancelled at once.
func TestClusterCancelThroughAnotherMember(t *testing.T) {
	t.Parallel()
	// Polling every 50 s, so the notification is the path to see; the owner's log line says
	// which one carried each cancel (via), so no wall-clock bound is needed to tell the two.
	cfg := clusterConfig(testdb.Postgres(t), 60)
	cfg.MaxConcurrent, cfg.PollSecs = 1, 50
	c := e2e.StartCluster(t, 2, cfg, nil)
	long := []string{
		c.Members[0].MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("cancel-1", 600, 10)}),
		c.Members[1].MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("cancel-2", 600, 10)}),
	}
	for _, id := range long {
		c.Members[0].WaitRun(t, id, time.Minute, "running", func(r e2e.RunResource) bool { return r.Status == "running" })
	}
	// Both members are full: a third run waits, and is cancelled at once from anywhere.
	queued := c.Members[0].MustSubmit(t, e2e.SubmitRequest{Config: e2e.QuickConfig("cancel-pending", 1)})
	var rec e2e.RunResource
	require.Equal(t, http.StatusOK, c.Members[1].MustDo(t, http.MethodPost, "/v1/runs/"+queued+"/cancel", nil, &rec))
	require.Equal(t, "cancelled", rec.Status)
	require.Empty(t, rec.Attempts, "never claimed")

	for _, id := range long {
		r := c.Members[0].GetRun(t, id)
		owner := c.ByInstance(t, r.Owner.InstanceID)
		other := c.Members[0]
		if other == owner {
			other = c.Members[1]
		}
		start := time.Now()
		require.Equal(t, http.StatusAccepted, other.Cancel(t, id))
		final := other.WaitRun(t, id, time.Minute, "cancelled", terminal)
		took := time.Since(start)
		require.Equal(t, "cancelled", final.Status)
		require.Equal(t, []string{"cancelled"}, final.Outcomes())
		require.Equal(t, "notification", cancelPath(t, owner, id), "the owner learnt of the cancel from the notification")
		t.Logf("cancel through the other member took %s", took.Round(time.Millisecond))
	}
}

// cancelPath is how run id's cancel reached its owner m, as m's log line says
// ("notification" or "poll"). The line is written just after the run's token fires, so
// it may trail the run's terminal answer a moment: it is waited for.
func cancelPath(t *testing.T, m *e2e.Member, id string) string {
	t.Helper()
	via := ""
	require.Eventually(t, func() bool {
		for _, l := range m.Logs() {
			if l.RunID == id && strings.HasPrefix(l.Msg, "cancel requested;") {
				via, _ = l.Raw["via"].(string)
				return true
			}
		}
		return false
	}, time.Minute, 20*time.Millisecond, "%s logged no cancel request for run %s", m.Name, id)
	return via
}

// (e') With --poll-only the cancel flag is found by polling, within --cluster-poll-secs.
func TestClusterCancelPollOnly(t *testing.T) {
	t.Parallel()
	cfg := clusterConfig(testdb.Postgres(t), 5)
	cfg.MaxConcurrent, cfg.PollOnly = 1, true
	c := e2e.StartCluster(t, 2, cfg, nil)
	id := c.Members[0].MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("poll-cancel", 600, 10)})
	r := c.Members[0].WaitRun(t, id, time.Minute, "running", func(r e2e.RunResource) bool { return r.Status == "running" })
	other := c.Members[0]
	if other.InstanceID(t) == r.Owner.InstanceID {
		other = c.Members[1]
	}
	start := time.Now()
	require.Equal(t, http.StatusAccepted, other.Cancel(t, id))
	final := other.WaitRun(t, id, time.Minute, "cancelled", terminal)
	require.Equal(t, "cancelled", final.Status)
	owner := c.ByInstance(t, r.Owner.InstanceID)
	require.Equal(t, "poll", cancelPath(t, owner, id), "with --poll-only the owner found the flag by polling")
	t.Logf("found by polling after %s (poll interval 1 s)", time.Since(start).Round(time.Millisecond))
}

// (f) Pools: a gpu member claims only gpu runs, an unserved pool is refused with a
// message that says what to do, and --pool-wait-timeout-secs fails runs whose pool lost
// its last member.
func TestClusterPools(t *testing.T) {
	t.Parallel()
	cfg := clusterConfig(testdb.Postgres(t), 3)
	cfg.PoolWaitSecs = 2
	c := e2e.StartCluster(t, 3, cfg, func(i int, mc *e2e.MemberConfig) {
		if i == 2 {
			mc.Pools, mc.MaxConcurrent, mc.ShutdownGraceSecs = []string{"gpu"}, 1, e2e.Secs(0)
		}
	})
	m0, gpu := c.Members[0], c.Members[2]

	var gpuRuns, defaultRuns []string
	for i := range 4 {
		gpuRuns = append(gpuRuns, m0.MustSubmit(t, e2e.SubmitRequest{Config: e2e.QuickConfig(fmt.Sprintf("gpu-%d", i), 5), Pool: "gpu"}))
	}
	for i := range 6 {
		defaultRuns = append(defaultRuns, gpu.MustSubmit(t, e2e.SubmitRequest{Config: e2e.QuickConfig(fmt.Sprintf("cpu-%d", i), 5)}))
	}
	runs := c.WaitTerminal(t, append(slices.Clone(gpuRuns), defaultRuns...), 30*time.Second)
	for _, id := range gpuRuns {
		require.Equal(t, "completed", runs[id].Status)
		require.Equal(t, "gpu", runs[id].Pool)
		require.Equal(t, gpu.InstanceID(t), runs[id].Attempts[0].InstanceID, "only the gpu member claims gpu runs")
	}
	for _, id := range defaultRuns {
		require.Equal(t, "completed", runs[id].Status)
		require.NotEqual(t, gpu.InstanceID(t), runs[id].Attempts[0].InstanceID, "the gpu member serves gpu only")
	}

	status, sub := m0.Submit(t, e2e.SubmitRequest{Config: e2e.QuickConfig("tpu", 1), Pool: "tpu"})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Equal(t, "pool_unserved", sub.Error.Code)
	for _, want := range []string{`"tpu"`, "default, gpu", "--pool tpu"} {
		require.Contains(t, sub.Error.Message, want)
	}

	// The gpu member is busy with a long run, so a second gpu run waits; then it leaves.
	busy := m0.MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("gpu-long", 600, 10), Pool: "gpu"})
	gpu.WaitRun(t, busy, time.Minute, "running on the gpu member", runningOn(gpu.InstanceID(t)))
	waiting := m0.MustSubmit(t, e2e.SubmitRequest{Config: e2e.QuickConfig("gpu-waits", 1), Pool: "gpu"})
	require.Eventually(t, func() bool {
		return metricSum(m0.Metrics(t), "sluice_serve_runs_pending", `pool="gpu"`) == 1
	}, 5*time.Second, 50*time.Millisecond, "sluice_serve_runs_pending shows the waiting run")
	left := time.Now()
	gpu.Term(t)
	res := gpu.Wait(t)
	require.Equal(t, 0, res.Code, res.String())

	status, sub = m0.Submit(t, e2e.SubmitRequest{Config: e2e.QuickConfig("gpu-late", 1), Pool: "gpu"})
	require.Equal(t, http.StatusUnprocessableEntity, status, "no live member serves gpu any more")
	require.Equal(t, "pool_unserved", sub.Error.Code)
	for _, id := range []string{busy, waiting} {
		final := m0.WaitRun(t, id, time.Minute, "terminal", terminal)
		require.Equal(t, "failed", final.Status)
		require.Equal(t, "pool_unavailable", final.Error.Code)
		require.GreaterOrEqual(t, time.Since(left), 2*time.Second, "not before --pool-wait-timeout-secs")
	}
	require.Equal(t, []string{"handed_back"}, m0.GetRun(t, busy).Outcomes(), "the long run was handed back first")
	awaitMetric(t, 2, func() float64 {
		return membersSum(t, c.Members[:2], "sluice_serve_runs_total", `reason="pool_unavailable"`)
	}, "sluice_serve_runs_total{reason=\"pool_unavailable\"}")
}

// Two members may share one SQLite file on one host; they poll (SQLite has no NOTIFY).
func TestClusterOnSharedSQLite(t *testing.T) {
	t.Parallel()
	history := "sqlite:" + filepath.Join(t.TempDir(), "shared.db")
	c := e2e.StartCluster(t, 2, clusterConfig(history, 3), nil)
	var ids []string
	for i := range 20 {
		ids = append(ids, c.Members[i%2].MustSubmit(t, e2e.SubmitRequest{Config: e2e.QuickConfig(fmt.Sprintf("lite-%d", i), 3)}))
	}
	runs := c.WaitTerminal(t, ids, 30*time.Second)
	for _, id := range ids {
		require.Equal(t, "completed", runs[id].Status)
		requireNoOverlap(t, runs[id])
	}
}

// Reclaim at the attempt cap fails the run as poisoned, saying how often it was
// reclaimed; a run whose cancel was requested while its owner died ends cancelled.
func TestClusterReclaimPoisonsAtTheCapAndHonoursCancels(t *testing.T) {
	t.Parallel()
	cfg := clusterConfig(testdb.Postgres(t), 3)
	cfg.MaxAttempts = 1
	c := e2e.StartCluster(t, 1, cfg, nil)
	m0 := c.Members[0]
	poisoned := m0.MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("poison", 600, 10)})
	cancelled := m0.MustSubmit(t, e2e.SubmitRequest{Config: e2e.SlowConfig("cancel-dead", 600, 10)})
	for _, id := range []string{poisoned, cancelled} {
		m0.WaitRun(t, id, time.Minute, "running on m0", runningOn(m0.InstanceID(t)))
	}
	m1 := c.Add(t, nil)
	m0.Kill(t)
	require.Equal(t, http.StatusAccepted, m1.Cancel(t, cancelled), "the flag is set for an owner that will never see it")

	final := m1.WaitRun(t, poisoned, time.Minute, "terminal", terminal)
	require.Equal(t, "failed", final.Status)
	require.Equal(t, "poisoned", final.Error.Code)
	require.Contains(t, final.Error.Message, "reclaimed 1 times")
	require.Contains(t, final.Error.Message, "--cluster-max-attempts")
	require.Equal(t, []string{"lost"}, final.Outcomes())

	final = m1.WaitRun(t, cancelled, time.Minute, "terminal", terminal)
	require.Equal(t, "cancelled", final.Status)
	require.Equal(t, []string{"lost"}, final.Outcomes())
	// The reclaim's transaction ends the runs before the member counts them, so a scrape
	// right after the terminal answer may come early: wait for the count.
	for _, outcome := range []string{"failed", "cancelled"} {
		awaitMetric(t, 1, func() float64 {
			return metricSum(m1.Metrics(t), "sluice_serve_runs_reclaimed_total", `outcome="`+outcome+`"`)
		}, "sluice_serve_runs_reclaimed_total{outcome=%q}", outcome)
	}
}

// awaitMetric waits until read returns want (a member counts an outcome just after the
// history records it, so a scrape may see the run terminal and the counter not yet
// moved), then checks it stays there: a counter that overshoots fails.
func awaitMetric(t *testing.T, want float64, read func() float64, msgAndArgs ...any) {
	t.Helper()
	var got float64
	deadline := time.Now().Add(time.Minute) // only ends a count that never comes
	for got = read(); got < want && time.Now().Before(deadline); got = read() {
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, want, got, msgAndArgs...)
}
