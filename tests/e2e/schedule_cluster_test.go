package e2e_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// leads reports whether a member's log says it became the scheduler's leader after
// `since` log lines.
func leads(m *e2e.Member, since int) bool {
	logs := m.Logs()
	for _, l := range logs[min(since, len(logs)):] {
		if l.Msg == "leading the scheduler" {
			return true
		}
	}
	return false
}

// Two clustered members on PostgreSQL (SPEC §9.3): the leader is paused past the TTL and
// deposed, the new leader is killed and the first takes over again; ticks go on and no
// tick or run is created twice.
func TestScheduleLeaderFailover(t *testing.T) {
	t.Parallel()
	history := testdb.Postgres(t)
	cfg := clusterConfig(history, 3)
	// A TTL of 6 s gives each heartbeat 2 s: with 3 s (1 s each) a heartbeat stalled by a
	// loaded CI machine once ended the last leader's term, and the leaders table showed a
	// fourth term the test does not expect.
	cfg.Extra = []string{"--leader-ttl-secs", "6"}
	c := e2e.StartCluster(t, 2, cfg, nil)
	a, b := c.Members[0], c.Members[1]

	require.Equal(t, http.StatusCreated, a.MustDo(t, "POST", "/v1/templates",
		map[string]any{"id": "minutely", "config": e2e.QuickConfig("minutely", 5)}, nil))
	var sched struct {
		ID string `json:"id"`
	}
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	require.Equal(t, http.StatusCreated, b.MustDo(t, "POST", "/v1/templates/minutely/schedules",
		map[string]any{"cron": "* * * * *", "start_date": yesterday}, &sched))

	ticks := func(m *e2e.Member) []tickResource {
		var page struct {
			Ticks []tickResource `json:"ticks"`
		}
		require.Equal(t, http.StatusOK, m.MustDo(t, "GET", "/v1/schedules/"+sched.ID+"/ticks?limit=5", nil, &page))
		return page.Ticks
	}
	var first []tickResource
	require.Eventually(t, func() bool {
		first = ticks(a)
		return len(first) > 0 && first[0].Status == "created"
	}, 30*time.Second, 100*time.Millisecond, "the leader creates the due tick")

	leader, standby := a, b
	if leads(b, 0) {
		leader, standby = b, a
	}
	require.True(t, leads(leader, 0))
	require.False(t, leads(standby, 0), "one leader at a time")

	// Paused past the TTL: the standby terminates its session and takes over.
	mark := len(standby.Logs())
	leader.Pause(t)
	require.Eventually(t, func() bool { return leads(standby, mark) }, time.Minute, 100*time.Millisecond,
		"the standby did not take over from a paused leader")
	require.Contains(t, standby.Stderr(), "deposed a scheduler leader whose heartbeat is stale")
	oldMark := len(leader.Logs())
	leader.Resume(t)
	require.Eventually(t, func() bool {
		for _, l := range leader.Logs()[oldMark:] {
			if l.Msg == "stopped leading the scheduler" {
				return true
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond, "the deposed leader did not notice")

	// The new leader dies: its session ends with it and the first member leads again.
	mark = len(leader.Logs())
	standby.Kill(t)
	standby.Wait(t)
	require.Eventually(t, func() bool { return leads(leader, mark) }, time.Minute, 100*time.Millisecond,
		"nobody took over from a killed leader")

	// Ticking goes on, once per minute.
	last, err := time.Parse(time.RFC3339, first[0].Instant)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		now := ticks(leader)
		at, _ := time.Parse(time.RFC3339, now[0].Instant)
		return at.After(last) && now[0].Status == "created"
	}, 80*time.Second, 250*time.Millisecond, "no tick after the failovers")

	// Exactly once: every created tick names a distinct run, each run key is unique, and
	// no instant since the first is missing.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, history)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var ticksN, distinctRuns, runsN, keysN int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT run_id) FROM sluice_schedule_ticks
WHERE schedule_id = $1 AND status <> 'skipped'`, sched.ID).Scan(&ticksN, &distinctRuns))
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT run_key) FROM sluice_runs WHERE trigger_kind = 'schedule'`).
		Scan(&runsN, &keysN))
	require.Equal(t, ticksN, distinctRuns)
	require.Equal(t, ticksN, runsN, "one run per created tick")
	require.Equal(t, runsN, keysN, "no run key twice")
	var gaps int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM (
  SELECT instant - lag(instant) OVER (ORDER BY instant) AS step FROM sluice_schedule_ticks
  WHERE schedule_id = $1 AND instant >= $2) s WHERE step <> 60000`, sched.ID, last.UnixMilli()).Scan(&gaps))
	require.Zero(t, gaps, "a minute was skipped or doubled")

	// The leaders table records each term.
	rows, err := conn.Query(ctx, `SELECT epoch, instance_id, stopped_at IS NOT NULL FROM sluice_leaders ORDER BY epoch`)
	require.NoError(t, err)
	var terms []string
	for rows.Next() {
		var (
			epoch   int64
			id      string
			stopped bool
		)
		require.NoError(t, rows.Scan(&epoch, &id, &stopped))
		who := "standby"
		if id == leader.InstanceID(t) {
			who = "leader"
		}
		terms = append(terms, who+map[bool]string{true: " stopped", false: " open"}[stopped])
	}
	require.NoError(t, rows.Err())
	require.Len(t, terms, 3, strings.Join(terms, ", "))
	require.Equal(t, []string{"leader open", "standby open", "leader open"}, terms,
		"the deposed and the killed terms keep no stop time")
}
