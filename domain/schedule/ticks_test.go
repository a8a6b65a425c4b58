package schedule_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/schedule"
)

func hourly(t *testing.T, from string, n int) []time.Time {
	t.Helper()
	out := make([]time.Time, n)
	for i := range out {
		out[i] = utc(t, from).Add(time.Duration(i) * time.Hour)
	}
	return out
}

func requireTimes(t *testing.T, want, got []time.Time) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Truef(t, want[i].Equal(got[i]), "#%d: want %s, got %s", i, want[i], got[i])
	}
}

func TestDueTicks(t *testing.T) {
	t.Parallel()
	spec := schedule.MustParse("0 * * * *")
	last := utc(t, "2026-06-01T00:00:00Z") // the last tick handled
	for _, c := range []struct {
		name        string
		now         string
		catchup     bool
		max         int
		create      []time.Time
		skipped     []time.Time
		summaryN    int
		first, last string
	}{
		{name: "nothing due yet", now: "2026-06-01T00:59:59Z", catchup: true, max: 5},
		{name: "exactly due: now is inclusive", now: "2026-06-01T01:00:00Z",
			create: hourly(t, "2026-06-01T01:00:00Z", 1)},
		{name: "without catch-up only the latest", now: "2026-06-01T05:30:00Z", max: 3,
			create: hourly(t, "2026-06-01T05:00:00Z", 1), skipped: hourly(t, "2026-06-01T01:00:00Z", 4)},
		{name: "catch-up takes the latest max, oldest first", now: "2026-06-01T05:30:00Z", catchup: true, max: 3,
			create: hourly(t, "2026-06-01T03:00:00Z", 3), skipped: hourly(t, "2026-06-01T01:00:00Z", 2)},
		{name: "catch-up with fewer due than max", now: "2026-06-01T02:00:00Z", catchup: true, max: 3,
			create: hourly(t, "2026-06-01T01:00:00Z", 2)},
		{name: "max below 1 counts as 1", now: "2026-06-01T02:00:00Z", catchup: true, max: 0,
			create: hourly(t, "2026-06-01T02:00:00Z", 1), skipped: hourly(t, "2026-06-01T01:00:00Z", 1)},
		{name: "exactly 1000 missed are all listed", now: "2026-07-12T17:00:00Z",
			create:  hourly(t, "2026-07-12T17:00:00Z", 1),
			skipped: hourly(t, "2026-06-01T01:00:00Z", 1000)},
		{name: "1001 missed: the oldest is folded", now: "2026-07-12T18:00:00Z",
			create:   hourly(t, "2026-07-12T18:00:00Z", 1),
			skipped:  hourly(t, "2026-06-01T02:00:00Z", 1000),
			summaryN: 1, first: "2026-06-01T01:00:00Z", last: "2026-06-01T01:00:00Z"},
		{name: "a long outage with catch-up", now: "2026-09-01T00:00:00Z", catchup: true, max: 2,
			create:  hourly(t, "2026-08-31T23:00:00Z", 2),
			skipped: hourly(t, "2026-07-21T07:00:00Z", 1000),
			// 2208 hourly ticks in June..August: 2 created, 1000 listed, 1206 folded.
			summaryN: 1206, first: "2026-06-01T01:00:00Z", last: "2026-07-21T06:00:00Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			create, skipped, summary := schedule.DueTicks(spec, time.UTC, last, utc(t, c.now), c.catchup, c.max)
			requireTimes(t, c.create, create)
			requireTimes(t, c.skipped, skipped)
			if c.summaryN == 0 {
				require.Nil(t, summary)
				return
			}
			require.NotNil(t, summary)
			require.Equal(t, c.summaryN, summary.Count)
			require.True(t, utc(t, c.first).Equal(summary.First), summary.First)
			require.True(t, utc(t, c.last).Equal(summary.Last), summary.Last)
			// Every due tick is accounted for exactly once.
			due := 0
			for cur := spec.Next(last, time.UTC); !cur.After(utc(t, c.now)); cur = spec.Next(cur, time.UTC) {
				due++
			}
			require.Equal(t, due, summary.Count+len(skipped)+len(create))
			require.True(t, summary.Last.Before(skipped[0]))
		})
	}
}

func TestDueTicksCapsCatchup(t *testing.T) {
	t.Parallel()
	spec := schedule.MustParse("* * * * *")
	last := utc(t, "2026-06-01T00:00:00Z")
	create, skipped, summary := schedule.DueTicks(spec, time.UTC, last, last.Add(1500*time.Minute), true, 5000)
	require.Len(t, create, schedule.MaxCatchupRuns)
	require.Len(t, skipped, 500)
	require.Nil(t, summary)
	require.True(t, last.Add(501*time.Minute).Equal(create[0]))
}

func TestDueTicksFollowsTheDSTRules(t *testing.T) {
	t.Parallel()
	loc := zone(t, "America/New_York")
	create, skipped, summary := schedule.DueTicks(schedule.MustParse("30 1 * * *"), loc,
		utc(t, "2026-10-31T12:00:00Z"), utc(t, "2026-11-01T12:00:00Z"), true, 10)
	requireTimes(t, []time.Time{utc(t, "2026-11-01T05:30:00Z")}, create) // once, at the first 01:30
	require.Empty(t, skipped)
	require.Nil(t, summary)
}

func TestStartBound(t *testing.T) {
	t.Parallel()
	created := utc(t, "2026-06-10T08:15:00Z")
	for _, c := range []struct {
		name, date, zone, cron, want string
	}{
		{"absent: strictly after creation", "", "UTC", "15 8 * * *", "2026-06-11T08:15:00Z"},
		{"inclusive local date", "2026-06-01", "Europe/Berlin", "0 0 * * *", "2026-05-31T22:00:00Z"},
		{"midnight in a gap starts at the gap's end", "2018-11-04", "America/Sao_Paulo", "0 0 * * *", "2018-11-04T03:00:00Z"},
		{"every minute from the first minute", "2026-06-01", "Asia/Kolkata", "* * * * *", "2026-05-31T18:30:00Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			loc := zone(t, c.zone)
			bound, err := schedule.StartBound(c.date, created, loc)
			require.NoError(t, err)
			got := schedule.MustParse(c.cron).Next(bound, loc)
			require.True(t, utc(t, c.want).Equal(got), "got %s", got.UTC())
		})
	}
	bound, err := schedule.StartBound("2026-06-01", created, nil)
	require.NoError(t, err)
	require.Equal(t, "2026-05-31T23:59:59Z", bound.UTC().Format(time.RFC3339))
	for _, bad := range []string{"2026-6-1", "01/06/2026", "2026-02-30", "2026-06-01T00:00:00Z", "tomorrow"} {
		_, err := schedule.StartBound(bad, created, time.UTC)
		require.ErrorIs(t, err, schedule.ErrInvalidSchedule, bad)
		require.ErrorContains(t, err, "start_date: ", bad)
	}
}

func TestRunKey(t *testing.T) {
	t.Parallel()
	loc := zone(t, "America/New_York")
	tick := utc(t, "2026-03-08T04:30:00Z").In(loc)
	require.Equal(t, "schedule:s1:2026-03-08T04:30:00Z", schedule.RunKey("s1", tick))
	require.Equal(t, "schedule:s1:2026-03-08T04:30:00Z", schedule.RunKey("s1", tick.Add(999*time.Millisecond)), "sub-second parts are not part of a tick")
	require.NotEqual(t, schedule.RunKey("s1", tick), schedule.RunKey("s2", tick), "two schedules never share a run key")
	require.True(t, strings.HasPrefix(schedule.RunKey("s1", tick), schedule.RunKeyPrefix("s1")))
}
