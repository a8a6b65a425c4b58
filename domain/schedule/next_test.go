package schedule_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/schedule"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := schedule.LoadZone(name)
	require.NoError(t, err)
	return loc
}

func utc(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v
}

type vector struct {
	name string
	zone string
	cron string
	from string
	want []string // RFC 3339, UTC or with offset
}

func checkVectors(t *testing.T, vectors []vector) {
	t.Helper()
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			loc := zone(t, v.zone)
			spec, err := schedule.Parse(v.cron)
			require.NoError(t, err)
			got := spec.NextN(utc(t, v.from), loc, len(v.want))
			require.Len(t, got, len(v.want))
			for i, w := range v.want {
				require.Truef(t, utc(t, w).Equal(got[i]), "tick %d: want %s, got %s (%s)", i, w,
					got[i].UTC().Format(time.RFC3339), got[i].Format(time.RFC3339))
				require.Equal(t, loc, got[i].Location(), "ticks come back in the schedule's zone")
			}
		})
	}
}

// The table of SPEC §9.1 (America/New_York: spring forward 2026-03-08 02:00→03:00,
// fall back 2026-11-01 02:00→01:00).
func TestNextSpecTable(t *testing.T) {
	t.Parallel()
	const ny = "America/New_York"
	checkVectors(t, []vector{
		{"fixed hour in the gap fires at 03:00", ny, "30 2 * * *", "2026-03-07T12:00:00Z",
			[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		{"fixed hour in the overlap fires once, first", ny, "30 1 * * *", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"hourly fires each real hour of the overlap", ny, "0 * * * *", "2026-11-01T04:30:00Z",
			[]string{"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"}},
		{"a step skips the gap's minutes", ny, "*/15 * * * *", "2026-03-08T06:40:00Z",
			[]string{"2026-03-08T06:45:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:15:00Z"}},
		{"every hour at :30 across the gap", ny, "30 * * * *", "2026-03-08T06:00:00Z",
			[]string{"2026-03-08T06:30:00Z", "2026-03-08T07:30:00Z"}},
	})
}

func TestNextOtherZones(t *testing.T) {
	t.Parallel()
	const (
		berlin = "Europe/Berlin"       // 2026-03-29 02:00→03:00, 2026-10-25 03:00→02:00
		sao    = "America/Sao_Paulo"   // 2018-11-04 00:00→01:00, 2019-02-17 00:00→2019-02-16 23:00
		lhi    = "Australia/Lord_Howe" // +10:30/+11; 2026-04-05 02:00→01:30, 2026-10-04 02:00→02:30
		cairo  = "Africa/Cairo"        // 2025-04-25 00:00→01:00, 2025-10-31 00:00→2025-10-30 23:00
	)
	checkVectors(t, []vector{
		{"berlin gap, fixed", berlin, "30 2 * * *", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"berlin gap, several gap minutes fire once", berlin, "0,15,30 2 * * *", "2026-03-28T12:00:00Z",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:00:00+02:00"}},
		{"berlin gap, gap and 03:00 fire once", berlin, "0 2,3 * * *", "2026-03-28T23:00:00Z",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:00:00+02:00"}},
		{"berlin gap, real instants", berlin, "*/30 * * * *", "2026-03-29T00:15:00Z",
			[]string{"2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"}},
		{"berlin overlap, fixed", berlin, "30 2 * * *", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"berlin overlap, from between the two occurrences", berlin, "30 2 * * *", "2026-10-25T00:45:00Z",
			[]string{"2026-10-26T02:30:00+01:00"}},
		{"berlin overlap, every minute of a fixed hour once", berlin, "*/20 2 * * *", "2026-10-24T23:00:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-25T00:20:00Z", "2026-10-25T00:40:00Z", "2026-10-26T01:00:00Z"}},
		{"berlin overlap, hourly", berlin, "0 * * * *", "2026-10-24T23:30:00Z",
			[]string{"2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}},
		{"sao paulo midnight gap, fixed", sao, "0 0 * * *", "2018-11-02T12:00:00Z",
			[]string{"2018-11-03T00:00:00-03:00", "2018-11-04T01:00:00-02:00", "2018-11-05T00:00:00-02:00"}},
		{"sao paulo midnight gap, real instants", sao, "0 */12 * * *", "2018-11-03T12:00:00Z",
			[]string{"2018-11-03T12:00:00-03:00", "2018-11-04T12:00:00-02:00"}},
		{"sao paulo midnight overlap, fixed", sao, "30 23 * * *", "2019-02-16T12:00:00Z",
			[]string{"2019-02-16T23:30:00-02:00", "2019-02-17T23:30:00-03:00"}},
		{"sao paulo midnight overlap, hourly", sao, "30 * * * *", "2019-02-17T01:00:00Z",
			[]string{"2019-02-17T01:30:00Z", "2019-02-17T02:30:00Z", "2019-02-17T03:30:00Z"}},
		{"lord howe half-hour gap, fixed", lhi, "0 2 * * *", "2026-10-03T00:00:00Z",
			[]string{"2026-10-04T02:30:00+11:00", "2026-10-05T02:00:00+11:00"}},
		{"lord howe half-hour gap, fixed after the gap", lhi, "45 2 * * *", "2026-10-03T00:00:00Z",
			[]string{"2026-10-04T02:45:00+11:00"}},
		{"lord howe half-hour gap, real instants", lhi, "*/15 * * * *", "2026-10-03T15:10:00Z",
			[]string{"2026-10-03T15:15:00Z", "2026-10-03T15:30:00Z", "2026-10-03T15:45:00Z"}},
		{"lord howe half-hour overlap, fixed", lhi, "45 1 * * *", "2026-04-04T00:00:00Z",
			[]string{"2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"}},
		{"lord howe half-hour overlap, real instants", lhi, "*/15 * * * *", "2026-04-04T14:40:00Z",
			[]string{"2026-04-04T14:45:00Z", "2026-04-04T15:00:00Z", "2026-04-04T15:15:00Z", "2026-04-04T15:30:00Z"}},
		{"cairo midnight gap, fixed", cairo, "0 0 * * *", "2025-04-24T12:00:00Z",
			[]string{"2025-04-25T01:00:00+03:00", "2025-04-26T00:00:00+03:00"}},
		{"cairo midnight gap, minute inside the gap", cairo, "30 0 * * *", "2025-04-24T12:00:00Z",
			[]string{"2025-04-25T01:00:00+03:00", "2025-04-26T00:30:00+03:00"}},
		{"cairo midnight gap, real instants", cairo, "0 * * * *", "2025-04-24T20:30:00Z",
			[]string{"2025-04-24T21:00:00Z", "2025-04-24T22:00:00Z"}},
		{"cairo midnight overlap, fixed", cairo, "30 23 * * *", "2025-10-30T12:00:00Z",
			[]string{"2025-10-30T23:30:00+03:00", "2025-10-31T23:30:00+02:00"}},
		{"far future: rules past the zone table", "America/New_York", "30 2 * * *", "2040-03-10T12:00:00Z",
			[]string{"2040-03-11T03:00:00-04:00", "2040-03-12T02:30:00-04:00"}},
		// Past its table, time.ZoneBounds ends a leap year a day early; the year must still roll.
		{"far future: leap year end", "America/New_York", "0 */6 * * *", "2040-12-30T12:00:00Z",
			[]string{"2040-12-30T12:00:00-05:00", "2040-12-30T18:00:00-05:00", "2040-12-31T00:00:00-05:00",
				"2040-12-31T06:00:00-05:00", "2040-12-31T12:00:00-05:00", "2040-12-31T18:00:00-05:00",
				"2041-01-01T00:00:00-05:00", "2041-01-01T06:00:00-05:00"}},
		{"far future: fixed hour at leap year end", "Europe/Berlin", "30 0 * * *", "2040-12-30T12:00:00Z",
			[]string{"2040-12-31T00:30:00+01:00", "2041-01-01T00:30:00+01:00"}},
		{"fixed hour range on the gap day", "America/New_York", "0 1-3 * * *", "2026-03-08T05:00:00Z",
			[]string{"2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-09T05:00:00Z"}},
	})
}

func TestNextWithoutDST(t *testing.T) {
	t.Parallel()
	checkVectors(t, []vector{
		{"either-day rule: 1st or Monday", "UTC", "0 9 1 * MON", "2026-06-01T10:00:00Z",
			[]string{"2026-06-08T09:00:00Z", "2026-06-15T09:00:00Z", "2026-06-22T09:00:00Z", "2026-06-29T09:00:00Z", "2026-07-01T09:00:00Z"}},
		{"a starred day field means both must match", "UTC", "0 9 */10 * 1", "2026-06-01T10:00:00Z",
			[]string{"2026-08-31T09:00:00Z", "2026-09-21T09:00:00Z"}}, // Mondays that are the 1st, 11th, 21st or 31st
		{"a starred weekday means both must match", "UTC", "0 0 13 * */7", "2026-01-01T00:00:00Z",
			[]string{"2026-09-13T00:00:00Z", "2026-12-13T00:00:00Z"}}, // the 13th on a Sunday
		{"month and weekday names, any case", "UTC", "0 12 * jan-Mar mOn", "2026-03-28T00:00:00Z",
			[]string{"2026-03-30T12:00:00Z", "2027-01-04T12:00:00Z"}},
		{"sunday as 7", "UTC", "0 0 * * 7", "2026-06-01T00:00:00Z",
			[]string{"2026-06-07T00:00:00Z", "2026-06-14T00:00:00Z"}},
		{"weekday range through 7", "UTC", "0 0 * * 5-7", "2026-06-01T00:00:00Z",
			[]string{"2026-06-05T00:00:00Z", "2026-06-06T00:00:00Z", "2026-06-07T00:00:00Z", "2026-06-12T00:00:00Z"}},
		{"@hourly", "UTC", "@hourly", "2026-06-01T00:00:00Z",
			[]string{"2026-06-01T01:00:00Z", "2026-06-01T02:00:00Z"}},
		{"@daily", "UTC", "@daily", "2026-06-01T00:00:00Z",
			[]string{"2026-06-02T00:00:00Z", "2026-06-03T00:00:00Z"}},
		{"@weekly", "UTC", "@weekly", "2026-06-01T00:00:00Z",
			[]string{"2026-06-07T00:00:00Z", "2026-06-14T00:00:00Z"}},
		{"@monthly", "UTC", "@monthly", "2026-06-01T00:00:00Z",
			[]string{"2026-07-01T00:00:00Z", "2026-08-01T00:00:00Z"}},
		{"@yearly", "UTC", "@yearly", "2026-06-01T00:00:00Z",
			[]string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{"@annually", "UTC", "@annually", "2026-06-01T00:00:00Z",
			[]string{"2027-01-01T00:00:00Z"}},
		{"open step from a start", "UTC", "5/20 * * * *", "2026-06-01T00:00:00Z",
			[]string{"2026-06-01T00:05:00Z", "2026-06-01T00:25:00Z", "2026-06-01T00:45:00Z", "2026-06-01T01:05:00Z"}},
		{"range with step", "UTC", "1-30/10 * * * *", "2026-06-01T00:00:00Z",
			[]string{"2026-06-01T00:01:00Z", "2026-06-01T00:11:00Z", "2026-06-01T00:21:00Z", "2026-06-01T01:01:00Z"}},
		{"lists of ranges", "UTC", "0 8-9,17 * * MON-FRI", "2026-06-05T16:00:00Z",
			[]string{"2026-06-05T17:00:00Z", "2026-06-08T08:00:00Z", "2026-06-08T09:00:00Z", "2026-06-08T17:00:00Z"}},
		{"leap day", "UTC", "0 0 29 2 *", "2026-01-01T00:00:00Z",
			[]string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		{"leap day across 2100", "UTC", "0 0 29 2 *", "2096-03-01T00:00:00Z",
			[]string{"2104-02-29T00:00:00Z"}},
		{"leap day on a sunday, decades apart", "UTC", "0 0 29 2 */7", "2021-01-01T00:00:00Z",
			[]string{"2032-02-29T00:00:00Z", "2060-02-29T00:00:00Z", "2088-02-29T00:00:00Z", "2128-02-29T00:00:00Z"}},
		{"31st skips short months", "UTC", "0 0 31 * *", "2026-04-01T00:00:00Z",
			[]string{"2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z"}},
		{"strictly after an exact tick", "UTC", "*/5 * * * *", "2026-06-01T00:05:00Z",
			[]string{"2026-06-01T00:10:00Z"}},
		{"sub-minute start rounds up", "UTC", "* * * * *", "2026-06-01T00:05:00.5Z",
			[]string{"2026-06-01T00:06:00Z"}},
		{"year end rollover", "UTC", "59 23 31 12 *", "2026-12-31T23:59:00Z",
			[]string{"2027-12-31T23:59:00Z"}},
		{"half-hour zone", "Asia/Kolkata", "0 9 * * *", "2026-06-01T00:00:00Z",
			[]string{"2026-06-01T03:30:00Z", "2026-06-02T03:30:00Z"}},
	})
}

func TestNextNilZoneIsUTC(t *testing.T) {
	t.Parallel()
	got := schedule.MustParse("0 0 * * *").Next(utc(t, "2026-06-01T12:00:00Z"), nil)
	require.True(t, utc(t, "2026-06-02T00:00:00Z").Equal(got))
	require.Equal(t, time.UTC, got.Location())
}

func TestNextZeroSpecNeverFires(t *testing.T) {
	t.Parallel()
	require.True(t, schedule.Spec{}.Next(utc(t, "2026-06-01T12:00:00Z"), time.UTC).IsZero())
	require.Empty(t, schedule.Spec{}.NextN(utc(t, "2026-06-01T12:00:00Z"), time.UTC, 3))
}

// fixedDateZone is a zone with no history whose rule springs forward at 00:00 on day 100
// (10 April) and falls back on day 300, every year: a shape real zones rarely keep for
// long, but the one that makes a gap-only expression possible.
func fixedDateZone(t *testing.T) *time.Location {
	t.Helper()
	block := func(version byte) []byte {
		b := append([]byte("TZif"), version)
		b = append(b, make([]byte, 15)...)
		for _, n := range []uint32{0, 0, 0, 0, 1, 4} { // isut, isstd, leap, time, type, char counts
			b = binary.BigEndian.AppendUint32(b, n)
		}
		b = append(b, 0, 0, 0, 0, 0, 0) // one type: offset 0, not DST, abbreviation at 0
		return append(b, "XST\x00"...)
	}
	data := append(block('2'), block('2')...)
	data = append(data, "\nXST0XDT,J100/0,J300/0\n"...)
	loc, err := time.LoadLocationFromTZData("Test/FixedDate", data)
	require.NoError(t, err)
	return loc
}

func TestNextGapOnlyExpressionEnds(t *testing.T) {
	t.Parallel()
	loc := fixedDateZone(t)
	from := utc(t, "2030-01-01T00:00:00Z")

	// Real-instant rules: 00:30 on 10 April never exists, so nothing fires, and the
	// bounded search gives up (returning at all is the proof: it does not loop).
	require.True(t, schedule.MustParse("30 */24 10 4 *").Next(from, loc).IsZero())

	// Wall-clock rules: the same minute fires at the end of the gap, every year.
	checkFixed := schedule.MustParse("30 0 10 4 *").NextN(from, loc, 2)
	require.Len(t, checkFixed, 2)
	require.Equal(t, "2030-04-10T01:00:00+01:00", checkFixed[0].Format(time.RFC3339))
	require.Equal(t, "2031-04-10T01:00:00+01:00", checkFixed[1].Format(time.RFC3339))

	// Nearby minutes outside the gap still fire under both rules.
	got := schedule.MustParse("30 */24 11 4 *").Next(from, loc)
	require.Equal(t, "2030-04-11T00:30:00+01:00", got.Format(time.RFC3339))
}

func TestNextNCounts(t *testing.T) {
	t.Parallel()
	spec := schedule.MustParse("* * * * *")
	from := utc(t, "2026-06-01T00:00:00Z")
	require.Empty(t, spec.NextN(from, time.UTC, 0))
	require.Empty(t, spec.NextN(from, time.UTC, -1))
	require.Len(t, spec.NextN(from, time.UTC, 1440), 1440)
}

func TestMatches(t *testing.T) {
	t.Parallel()
	loc := zone(t, "America/New_York")
	spec := schedule.MustParse("30 1 * * *")
	require.True(t, spec.Matches(utc(t, "2026-11-01T05:30:00Z"), loc))
	require.True(t, spec.Matches(utc(t, "2026-11-01T06:30:00Z"), loc))
	require.False(t, spec.Matches(utc(t, "2026-11-01T07:30:00Z"), loc))
	require.True(t, spec.Matches(utc(t, "2026-06-01T01:30:00Z"), nil))
}
