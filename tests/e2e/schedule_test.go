package e2e_test

import (
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/testdb"
)

type tickResource struct {
	Instant      string  `json:"instant"`
	Status       string  `json:"status"`
	Reason       *string `json:"reason"`
	RunID        *string `json:"run_id"`
	SummaryCount *int    `json:"summary_count"`
}

// ticks reads every recorded tick of a schedule, newest first.
func (s *server) ticks(t *testing.T, id string) []tickResource {
	t.Helper()
	var all []tickResource
	before := ""
	for {
		var page struct {
			Ticks      []tickResource `json:"ticks"`
			NextBefore *string        `json:"next_before"`
		}
		path := "/v1/schedules/" + id + "/ticks?limit=1000"
		if before != "" {
			path += "&before=" + before
		}
		require.Equal(t, http.StatusOK, s.api(t, "GET", path, nil, &page))
		all = append(all, page.Ticks...)
		if page.NextBefore == nil {
			return all
		}
		before = *page.NextBefore
	}
}

// scheduledRuns lists the runs of pipeline name.
func (s *server) scheduledRuns(t *testing.T, name string) []runResource {
	t.Helper()
	var list struct {
		Runs []struct {
			runResource
			TriggerKind string `json:"trigger_kind"`
			RunKey      string `json:"run_key"`
		} `json:"runs"`
	}
	require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/runs?limit=500&name="+name, nil, &list))
	out := make([]runResource, 0, len(list.Runs))
	keys := map[string]bool{}
	for _, r := range list.Runs {
		require.Equal(t, "schedule", r.TriggerKind)
		require.False(t, keys[r.RunKey], "run key %s appears twice", r.RunKey)
		keys[r.RunKey] = true
		out = append(out, r.runResource)
	}
	return out
}

// A real `sluice serve` creates a schedule's due tick as a run that completes, records
// the missed ticks as SPEC §9.2 says, catches up with queued runs that promote one after
// another, and after a restart creates no tick twice and goes on ticking.
func TestScheduleTicksThroughServe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		history func(t *testing.T, dir string) string
	}{
		{"sqlite", func(_ *testing.T, dir string) string { return "sqlite:" + filepath.Join(dir, "history.db") }},
		{"postgres", func(t *testing.T, _ string) string { return testdb.Postgres(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			data := filepath.Join(dir, "data")
			history := tc.history(t, dir)
			s := startServe(t, data, nil, "--history", history)

			for _, name := range []string{"minutely", "caught"} {
				code := s.api(t, "POST", "/v1/templates", map[string]any{"id": name,
					"config": generateConfig(name, filepath.Join(dir, name+"-${param.region}.db"), 20, 0, 10,
						"params:\n  region: { type: string, default: eu }\n")}, nil)
				require.Equal(t, http.StatusCreated, code)
			}
			yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
			var minutely, caught struct {
				ID       string `json:"id"`
				NextTick string `json:"next_tick"`
			}
			require.Equal(t, http.StatusCreated, s.api(t, "POST", "/v1/templates/minutely/schedules", map[string]any{
				"cron": "* * * * *", "start_date": yesterday, "params": map[string]any{"region": "us"}}, &minutely))
			require.Equal(t, http.StatusCreated, s.api(t, "POST", "/v1/templates/caught/schedules", map[string]any{
				"cron": "* * * * *", "start_date": yesterday, "catchup": true, "max_catchup_runs": 3,
				"overlap_policy": "queue"}, &caught))

			// Without catch-up: the latest due tick is one run, and it completes.
			var runs []runResource
			require.Eventually(t, func() bool { runs = s.scheduledRuns(t, "minutely"); return len(runs) >= 1 },
				30*time.Second, 100*time.Millisecond)
			s.waitStatus(t, runs[len(runs)-1].RunID, "completed", 30*time.Second)
			require.Eventually(t, func() bool { return tableCount(t, filepath.Join(dir, "minutely-us.db")) >= 20 },
				10*time.Second, 50*time.Millisecond, "the schedule's params reach the run")

			// The newest created tick: when the minute turned meanwhile, a newer tick may
			// already be there, skipped because the run before it was still going.
			ticks := s.ticks(t, minutely.ID)
			at := slices.IndexFunc(ticks, func(tk tickResource) bool { return tk.Status == "created" })
			require.GreaterOrEqual(t, at, 0, "a tick became a run")
			require.LessOrEqual(t, at, 1, "only the minute after the run's tick may be newer")
			ticks = ticks[at:]
			newest := ticks[0]
			require.NotNil(t, newest.RunID)
			// Every minute since yesterday's midnight is accounted for: the created tick,
			// up to 1,000 missed ones listed and one summary row for the rest.
			last, err := time.Parse(time.RFC3339, newest.Instant)
			require.NoError(t, err)
			start, err := time.Parse(time.DateOnly, yesterday)
			require.NoError(t, err)
			total, listed, summaries := 0, 0, 0
			for _, tk := range ticks {
				switch {
				case tk.SummaryCount != nil:
					summaries++
					total += *tk.SummaryCount
					require.Equal(t, "missed while no scheduler was running", *tk.Reason)
				case tk.Status == "skipped":
					listed++
					total++
					require.Equal(t, "missed while no scheduler was running", *tk.Reason)
				default:
					total++
				}
			}
			require.Equal(t, 1000, listed)
			require.Equal(t, 1, summaries)
			require.Equal(t, int(last.Sub(start)/time.Minute)+1, total, "one tick per minute, none lost, none twice")

			// With catch-up 3 and overlap queue: three runs, oldest first, the later two
			// queued behind the first and promoted as each ends.
			var caughtRuns []runResource
			require.Eventually(t, func() bool {
				caughtRuns = s.scheduledRuns(t, "caught")
				return len(caughtRuns) >= 3
			}, 30*time.Second, 100*time.Millisecond)
			for _, r := range caughtRuns {
				s.waitStatus(t, r.RunID, "completed", 30*time.Second)
			}
			caughtTicks := s.ticks(t, caught.ID)
			statuses := []string{caughtTicks[0].Status, caughtTicks[1].Status, caughtTicks[2].Status}
			require.Subset(t, []string{"created", "queued"}, statuses)
			require.Contains(t, statuses, "queued", "catch-up runs wait behind each other")

			// A restart creates no tick twice.
			before := map[string]string{}
			for _, tk := range s.ticks(t, minutely.ID) {
				before[tk.Instant] = tk.Status
			}
			// The newest tick of the first server: a minute may have passed since `last`
			// was read, and the restarted server must make a tick of its own.
			for instant := range before {
				ts, err := time.Parse(time.RFC3339, instant)
				require.NoError(t, err)
				if ts.After(last) {
					last = ts
				}
			}
			s.stop(t)
			s = startServe(t, data, nil, "--history", history)
			after := s.ticks(t, minutely.ID)
			seen := map[string]bool{}
			for _, tk := range after {
				require.False(t, seen[tk.Instant], "tick %s recorded twice", tk.Instant)
				seen[tk.Instant] = true
				if status, ok := before[tk.Instant]; ok {
					require.Equal(t, status, tk.Status, "tick %s changed", tk.Instant)
				}
			}
			s.scheduledRuns(t, "minutely") // fails on a run key seen twice
			// And it goes on ticking: the next minute's tick becomes a run.
			require.Eventually(t, func() bool {
				now := s.ticks(t, minutely.ID)
				ts, _ := time.Parse(time.RFC3339, now[0].Instant)
				return ts.After(last) && now[0].Status == "created"
			}, 75*time.Second, 250*time.Millisecond, "no tick after the restart")
			// The leader counts a tick just after its batch commits: the tick can show a
			// moment before the count does.
			require.Eventually(t, func() bool {
				code, raw := s.call(t, "GET", "/metrics", "", nil)
				require.Equal(t, http.StatusOK, code)
				var created float64
				for _, line := range strings.Split(string(raw), "\n") {
					if v, ok := strings.CutPrefix(line, `sluice_schedule_ticks_total{outcome="created"} `); ok {
						var perr error
						created, perr = strconv.ParseFloat(v, 64)
						require.NoError(t, perr)
					}
				}
				return created >= 1
			}, time.Minute, 50*time.Millisecond, "the restarted server counted the tick it created")
			s.stop(t)
		})
	}
}

// A backfill through a real server: one run per window, each with its window bound in,
// serial (max_active 1) so they run one after another; posting it again creates nothing.
func TestBackfillThroughServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil)
	cfg := generateConfig("bf", filepath.Join(dir, "bf-${backfill.start}.db"), 10, 0, 10, "")
	body := map[string]any{"config": cfg, "from": "2026-03-28T00:00:00+01:00", "to": "2026-03-31T00:00:00+02:00",
		"window": "P1D", "timezone": "Europe/Berlin"}
	type answer struct {
		BackfillID string `json:"backfill_id"`
		Runs       []struct {
			RunID string `json:"run_id"`
			Start string `json:"start"`
			End   string `json:"end"`
		} `json:"runs"`
	}
	var first, again answer
	require.Equal(t, http.StatusAccepted, s.api(t, "POST", "/v1/backfill", body, &first))
	require.Len(t, first.Runs, 3)
	require.Equal(t, [2]string{"2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"}, [2]string{first.Runs[1].Start, first.Runs[1].End},
		"a calendar day in Berlin, 23 hours long on the DST Sunday")
	for _, r := range first.Runs {
		s.waitStatus(t, r.RunID, "completed", 30*time.Second)
		require.Equal(t, 10, tableCount(t, filepath.Join(dir, "bf-"+r.Start+".db")), "the window reached the run")
	}
	require.Equal(t, http.StatusAccepted, s.api(t, "POST", "/v1/backfill", body, &again))
	require.Equal(t, first, again, "posting again answers the same runs")
	var list struct {
		Runs []runResource `json:"runs"`
	}
	require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/runs?label=backfill_id="+first.BackfillID, nil, &list))
	require.Len(t, list.Runs, 3)
	// Both posts are audited, the second creating no run (SPEC §2.10).
	var audit struct {
		Entries []struct {
			Action  string         `json:"action"`
			Details map[string]any `json:"details"`
		} `json:"entries"`
	}
	require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/audit?limit=1000", nil, &audit))
	var created []float64
	for _, e := range audit.Entries {
		if e.Action == "backfill.posted" {
			require.Equal(t, first.BackfillID, e.Details["backfill_id"])
			created = append(created, e.Details["runs_created"].(float64))
		}
	}
	require.Equal(t, []float64{3, 0}, created)
	s.stop(t)
}
