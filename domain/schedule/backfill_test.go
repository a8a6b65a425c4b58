package schedule_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/schedule"
)

func TestParsePeriod(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]schedule.Period{
		"P1D":      {Days: 1},
		"P2W":      {Days: 14},
		"P1M":      {Months: 1},
		"P1Y2M3D":  {Years: 1, Months: 2, Days: 3},
		"PT6H":     {Clock: 6 * time.Hour},
		"PT90M":    {Clock: 90 * time.Minute},
		"P1DT12H":  {Days: 1, Clock: 12 * time.Hour},
		"PT1H2M3S": {Clock: time.Hour + 2*time.Minute + 3*time.Second},
	} {
		got, err := schedule.ParsePeriod(text)
		require.NoError(t, err, text)
		require.Equal(t, [4]any{want.Years, want.Months, want.Days, want.Clock}, [4]any{got.Years, got.Months, got.Days, got.Clock}, text)
		require.Equal(t, text, got.String())
	}
	for _, bad := range []string{"", "P", "PT", "1D", "P1H", "PT1D", "P0D", "PT0S", "P-1D", "P1.5D", "p1d", "P1DT", "P999999D"} {
		_, err := schedule.ParsePeriod(bad)
		require.ErrorIs(t, err, schedule.ErrInvalidSchedule, bad)
		require.ErrorContains(t, err, "window", bad)
	}
}

func windows(t *testing.T, from, to, period, zone string) []string {
	t.Helper()
	p, err := schedule.ParsePeriod(period)
	require.NoError(t, err)
	loc, err := schedule.LoadZone(zone)
	require.NoError(t, err)
	ws, err := schedule.Windows(utc(t, from), utc(t, to), p, loc)
	require.NoError(t, err)
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.Start.Format(time.RFC3339)+" "+w.End.Format(time.RFC3339))
	}
	return out
}

func TestBackfillWindows(t *testing.T) {
	t.Parallel()
	// A day is a calendar day in the zone: 23 hours on the spring-forward Sunday.
	require.Equal(t, []string{
		"2026-03-28T00:00:00+01:00 2026-03-29T00:00:00+01:00",
		"2026-03-29T00:00:00+01:00 2026-03-30T00:00:00+02:00",
		"2026-03-30T00:00:00+02:00 2026-03-31T00:00:00+02:00",
	}, windows(t, "2026-03-27T23:00:00Z", "2026-03-30T22:00:00Z", "P1D", "Europe/Berlin"))
	// The last window ends at `to`.
	require.Equal(t, []string{
		"2026-01-01T00:00:00Z 2026-01-01T06:00:00Z",
		"2026-01-01T06:00:00Z 2026-01-01T08:00:00Z",
	}, windows(t, "2026-01-01T00:00:00Z", "2026-01-01T08:00:00Z", "PT6H", "UTC"))
	// Months step from the first day's reading, without drifting.
	require.Equal(t, []string{
		"2026-01-31T00:00:00Z 2026-03-03T00:00:00Z",
		"2026-03-03T00:00:00Z 2026-03-31T00:00:00Z",
	}, windows(t, "2026-01-31T00:00:00Z", "2026-03-31T00:00:00Z", "P1M", "UTC"))
	// Hourly wall steps through the gap: 02:00 does not exist and gives no empty window.
	require.Equal(t, []string{
		"2026-03-29T01:00:00+01:00 2026-03-29T03:00:00+02:00",
		"2026-03-29T03:00:00+02:00 2026-03-29T04:00:00+02:00",
	}, windows(t, "2026-03-29T00:00:00Z", "2026-03-29T02:00:00Z", "PT1H", "Europe/Berlin"))
}

func TestBackfillWindowRefusals(t *testing.T) {
	t.Parallel()
	day, err := schedule.ParsePeriod("P1D")
	require.NoError(t, err)
	minute, err := schedule.ParsePeriod("PT1M")
	require.NoError(t, err)
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err = schedule.Windows(from, from, day, nil)
	require.ErrorContains(t, err, "to:")
	_, err = schedule.Windows(from, from.Add(-time.Hour), day, nil)
	require.ErrorIs(t, err, schedule.ErrInvalidSchedule)
	_, err = schedule.Windows(from, from.Add(10001*time.Minute), minute, nil)
	require.ErrorContains(t, err, "more than 10000 windows")
	ws, err := schedule.Windows(from, from.Add(10000*time.Minute), minute, nil)
	require.NoError(t, err)
	require.Len(t, ws, 10000)
}
