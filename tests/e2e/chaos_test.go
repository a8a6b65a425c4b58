package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// The chaos test: the cluster's promises under the faults a cluster meets every day
// (SPEC §4.4, §4.5, §4.8, §4.9 and §1.7). Three members on one PostgreSQL history burn
// down SLUICE_E2E_RUNS runs (200 by default; 1,000 locally), each `delivery:
// exactly_once` into its own `append` table in small pages, while one member is killed,
// another paused past its lease TTL, a third cut from the history and a fourth fault
// drains and restarts a member. Every run must complete, no two attempts of a run may
// overlap, and every table must hold each id exactly once.

const (
	chaosTTL      = 5  // --lease-ttl-secs: faults and failovers take seconds; TTL/6 bounds each lease statement
	chaosRows     = 20 // rows per run, in pages of chaosPage
	chaosPage     = 4
	chaosRate     = 5 // rows per second: a run lasts about 4 s, so faults land mid-run
	chaosSlots    = 6 // --max-concurrent-runs per member
	chaosAttempts = 50
)

// chaosConfig is run i: generated rows into its own table, exactly once.
func chaosConfig(i int) string {
	return fmt.Sprintf(`version: 1
name: chaos-%d
delivery: exactly_once
pipeline:
  source: { type: generate, config: { count: %d, rate: %d, batch_size: %d } }
  sink: { type: postgres, config: { connection_url: "${env:DST_URL}", table_name: chaos_%d, write_mode: append } }
`, i, chaosRows, chaosRate, chaosPage, i)
}

// listRunning lists the running runs through m, by owner instance id; ok is false when m
// does not answer.
func listRunning(m *e2e.Member) (map[string][]string, bool) {
	status, data, err := m.Do(http.MethodGet, "/v1/runs?status=running&limit=500", nil)
	if err != nil || status != http.StatusOK {
		return nil, false
	}
	var list struct {
		Runs []e2e.RunResource `json:"runs"`
	}
	if json.Unmarshal(data, &list) != nil {
		return nil, false
	}
	out := map[string][]string{}
	for _, r := range list.Runs {
		if r.Owner != nil {
			out[r.Owner.InstanceID] = append(out[r.Owner.InstanceID], r.RunID)
		}
	}
	return out, true
}

// chaos drives the faults.
type chaos struct {
	t   *testing.T
	c   *e2e.Cluster
	all []*e2e.Member // every process started, restarted ones too, for the figures
}

// holding waits until victim executes runs (seen through via) and returns their ids.
func (x *chaos) holding(victim, via *e2e.Member) []string {
	x.t.Helper()
	var held []string
	require.Eventually(x.t, func() bool {
		byOwner, ok := listRunning(via)
		held = byOwner[victim.InstanceID(x.t)]
		return ok && len(held) > 0
	}, time.Minute, 20*time.Millisecond, "%s executes runs when the fault starts", victim.Name)
	return held
}

// reclaimed waits until a peer has reclaimed one of held from victim.
func (x *chaos) reclaimed(held []string, victim, via *e2e.Member) {
	x.t.Helper()
	require.Eventually(x.t, func() bool {
		for _, id := range held {
			status, data, err := via.Do(http.MethodGet, "/v1/runs/"+id, nil)
			var r e2e.RunResource
			if err != nil || status != http.StatusOK || json.Unmarshal(data, &r) != nil {
				continue
			}
			for _, a := range r.Attempts {
				if a.InstanceID == victim.InstanceID(x.t) && a.Outcome != nil && *a.Outcome == "lost" {
					return true
				}
			}
		}
		return false
	}, 4*chaosTTL*time.Second, 20*time.Millisecond, "a peer reclaims a run of %s", victim.Name)
}

// restart replaces member i by a new process with its configuration.
func (x *chaos) restart(i int) {
	x.t.Helper()
	m := x.c.Members[i].Restart(x.t)
	m.WaitReady(x.t, 30*time.Second)
	m.InstanceID(x.t)
	x.c.Members[i] = m
	x.all = append(x.all, m)
}

// logCount counts the log lines of every process that contain text.
func (x *chaos) logCount(text string) int {
	n := 0
	for _, m := range x.all {
		n += strings.Count(m.Stderr(), text)
	}
	return n
}

// chaosRoundRuns is the unfinished work a round of faults needs to start: about five
// waves of the cluster's slots, so each of its four victims is still executing runs.
const chaosRoundRuns = 100

// unfinished counts the pending and running runs, seen through via (500 at most).
func (x *chaos) unfinished(via *e2e.Member) int {
	x.t.Helper()
	n := 0
	for _, status := range []string{"pending", "running"} {
		var list struct {
			Runs []e2e.RunResource `json:"runs"`
		}
		require.Equal(x.t, http.StatusOK, via.MustDo(x.t, http.MethodGet, "/v1/runs?limit=500&status="+status, nil, &list))
		n += len(list.Runs)
	}
	return n
}

// round is one of each fault, starting with member r mod 3: kill -9 and restart, SIGSTOP
// past the TTL and SIGCONT, a cut history link restored, and a SIGTERM drain and restart.
// Each waits until its victim executes runs, and each is watched through a member the
// round is not disturbing at that moment.
func (x *chaos) round(r int, proxies []*e2e.Proxy) {
	x.t.Helper()
	c := x.c
	k, p, d := r%3, (r+1)%3, (r+2)%3 // killed, paused then drained, cut
	via := func(i int) *e2e.Member { return c.Members[(i+1)%3] }

	// kill -9: no drain, leases left to expire; a peer reclaims, then the member restarts.
	held := x.holding(c.Members[k], via(k))
	c.Members[k].Kill(x.t)
	x.reclaimed(held, c.Members[k], via(k))
	x.restart(k)

	// SIGSTOP past the TTL: a peer reclaims; once resumed, the member's late writes are
	// refused by the fences (lease, and the watermark's epoch) and it stops those runs.
	held = x.holding(c.Members[p], via(p))
	c.Members[p].Pause(x.t)
	x.reclaimed(held, c.Members[p], via(p))
	c.Members[p].Resume(x.t)

	// The history link is cut: the member stops its runs before their leases can expire.
	// In even rounds the link returns at once and it hands them back; in odd rounds it
	// stays cut past the TTL, so peers reclaim them — among them runs whose sink had
	// committed the end of the read while their finish could not reach the history,
	// which a re-execution must not write again.
	cut := c.Members[d]
	held = x.holding(cut, via(d))
	const cutoff = "past the outage cutoff"
	before := strings.Count(cut.Stderr(), cutoff)
	proxies[d].Cut()
	require.Eventually(x.t, func() bool { return strings.Count(cut.Stderr(), cutoff) > before },
		4*chaosTTL*time.Second, 20*time.Millisecond, "%s stops its runs at the outage cutoff", cut.Name)
	if r%2 == 1 {
		x.reclaimed(held, cut, via(d))
	}
	proxies[d].Restore()
	cut.WaitReady(x.t, 30*time.Second)

	// SIGTERM: the member drains (hands back what outlasts the grace) and restarts.
	x.holding(c.Members[p], via(p))
	c.Members[p].Term(x.t)
	res := c.Members[p].Wait(x.t)
	require.Equal(x.t, 0, res.Code, res.String())
	x.restart(p)
}

func TestChaosExactlyOnceUnderFaults(t *testing.T) {
	t.Parallel()
	total := e2e.Runs(t, 200)
	history := testdb.Postgres(t)
	sink := newPGSchema(t)
	var ddl strings.Builder
	for i := range total {
		// No key: a row written twice would stay twice.
		fmt.Fprintf(&ddl, "CREATE TABLE chaos_%d (id bigint, name text, amount double precision, active boolean, created_at timestamptz);\n", i)
	}
	sink.exec(t, ddl.String())

	proxies := make([]*e2e.Proxy, 3)
	for i := range proxies {
		proxies[i] = e2e.NewProxy(t, e2e.ProxyTarget(t, history))
	}
	cfg := e2e.MemberConfig{History: history, LeaseTTLSecs: chaosTTL, PollSecs: 1, MaxConcurrent: chaosSlots,
		MaxAttempts: chaosAttempts, ShutdownGraceSecs: e2e.Secs(1), ShutdownKillSecs: e2e.Secs(10),
		Env: map[string]string{"DST_URL": sink.url}, Timeout: 20 * time.Minute}
	c := e2e.StartCluster(t, 3, cfg, func(i int, mc *e2e.MemberConfig) { mc.History = proxies[i].URL(t, history) })
	x := &chaos{t: t, c: c, all: slices.Clone(c.Members)}

	ids := make([]string, total)
	for i := range total {
		ids[i] = c.Members[i%3].MustSubmit(t, e2e.SubmitRequest{Config: chaosConfig(i)})
	}
	start := time.Now()
	// Rounds of the four faults, each on another member than the last round's, while
	// enough work is left that every victim is caught executing runs.
	rounds := 0
	for ; rounds == 0 || x.unfinished(c.Members[rounds%3]) > chaosRoundRuns; rounds++ {
		x.round(rounds, proxies)
		t.Logf("%s: round %d of faults done", time.Since(start).Round(time.Millisecond), rounds+1)
	}

	runs := c.WaitTerminal(t, ids, time.Duration(total)*time.Second+5*time.Minute)
	maxAttempt, lost, handedBack := 0, 0, 0
	for i, id := range ids {
		r := runs[id]
		require.Equal(t, "completed", r.Status, "run %s (%d): %+v, attempts %v", id, i, r.Error, r.Outcomes())
		require.Empty(t, e2e.Overlapping(r.Attempts), "run %s was held by two members at once: %+v", id, r.Attempts)
		maxAttempt = max(maxAttempt, len(r.Attempts))
		for _, o := range r.Outcomes() {
			switch o {
			case "lost":
				lost++
			case "handed_back":
				handedBack++
			}
		}
	}
	for i := range total {
		var rows, distinct, low, high int64
		require.NoError(t, sink.conn.QueryRow(t.Context(), fmt.Sprintf(
			"SELECT count(*), count(DISTINCT id), COALESCE(min(id), 0), COALESCE(max(id), 0) FROM chaos_%d", i)).
			Scan(&rows, &distinct, &low, &high))
		require.Equal(t, [4]int64{chaosRows, chaosRows, 1, chaosRows}, [4]int64{rows, distinct, low, high},
			"table chaos_%d (run %s, attempts %v) holds ids 1..%d exactly once", i, ids[i], runs[ids[i]].Outcomes(), chaosRows)
	}
	// Stale writers refused: by the history's lease fence (the member logs "lease lost")
	// and by the sink's watermark epoch (the attempt's own log says so).
	byLease := x.logCount(`"msg":"lease lost`)
	byWatermark := 0
	for _, id := range ids {
		if len(runs[id].Attempts) < 2 {
			continue
		}
		_, data, err := c.Members[0].Do(http.MethodGet, "/v1/runs/"+id+"/logs?limit=1000", nil)
		require.NoError(t, err)
		byWatermark += strings.Count(string(data), "taken by a newer writer")
	}
	require.Positive(t, lost, "the kill and the pause left attempts for peers to reclaim")
	t.Logf("chaos: %d runs completed in %s through %d rounds of faults; max attempt %d; reclaimed %d; handed back %d; "+
		"fenced writers refused %d (lease %d, watermark %d)", total, time.Since(start).Round(time.Second), rounds,
		maxAttempt, lost, handedBack, byLease+byWatermark, byLease, byWatermark)
}
