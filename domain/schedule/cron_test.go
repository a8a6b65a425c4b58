package schedule_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/schedule"
)

// values lists what one field selects, read back through Next: the expression puts the
// field under test in place and fixes the others, and Next walks one cycle of the field.
func values(t *testing.T, field, text string) []int {
	t.Helper()
	var expr string
	var from, until time.Time
	var part func(time.Time) int
	// 2026-03-01 is a Sunday; January 2026 has 31 days.
	switch field {
	case schedule.FieldMinute:
		expr, from, until = text+" 0 * * *", date(2026, 1, 1), date(2026, 1, 1).Add(time.Hour)
		part = func(t time.Time) int { return t.Minute() }
	case schedule.FieldHour:
		expr, from, until = "0 "+text+" * * *", date(2026, 1, 1), date(2026, 1, 2)
		part = func(t time.Time) int { return t.Hour() }
	case schedule.FieldDayOfMonth:
		expr, from, until = "0 0 "+text+" 1 *", date(2026, 1, 1), date(2026, 2, 1)
		part = func(t time.Time) int { return t.Day() }
	case schedule.FieldMonth:
		expr, from, until = "0 0 1 "+text+" *", date(2026, 1, 1), date(2027, 1, 1)
		part = func(t time.Time) int { return int(t.Month()) }
	case schedule.FieldDayOfWeek:
		expr, from, until = "0 0 * * "+text, date(2026, 3, 1), date(2026, 3, 8)
		part = func(t time.Time) int { return int(t.Weekday()) }
	}
	spec, err := schedule.Parse(expr)
	require.NoError(t, err, expr)
	out := []int{}
	for cur := from.Add(-time.Nanosecond); ; {
		cur = spec.Next(cur, time.UTC)
		if !cur.Before(until) {
			return out
		}
		out = append(out, part(cur))
	}
}

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func seq(lo, hi, step int) []int {
	var out []int
	for v := lo; v <= hi; v += step {
		out = append(out, v)
	}
	return out
}

func TestParseFields(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		field, text string
		want        []int
	}{
		{schedule.FieldMinute, "*", seq(0, 59, 1)},
		{schedule.FieldMinute, "*/15", []int{0, 15, 30, 45}},
		{schedule.FieldMinute, "1-30/5", []int{1, 6, 11, 16, 21, 26}},
		{schedule.FieldMinute, "5/10", []int{5, 15, 25, 35, 45, 55}},
		{schedule.FieldMinute, "0,59,7-9", []int{0, 7, 8, 9, 59}},
		{schedule.FieldMinute, "05", []int{5}},
		{schedule.FieldMinute, "*/60", []int{0}},
		{schedule.FieldMinute, "10-10", []int{10}},
		{schedule.FieldHour, "*/6", []int{0, 6, 12, 18}},
		{schedule.FieldHour, "9-17", seq(9, 17, 1)},
		{schedule.FieldHour, "23", []int{23}},
		{schedule.FieldDayOfMonth, "*/10", []int{1, 11, 21, 31}},
		{schedule.FieldMonth, "JAN-MAR", []int{1, 2, 3}},
		{schedule.FieldMonth, "dec,Jun", []int{6, 12}},
		{schedule.FieldMonth, "*/3", []int{1, 4, 7, 10}},
		{schedule.FieldMonth, "feb-4", []int{2, 3, 4}},
		{schedule.FieldDayOfWeek, "SUN", []int{0}},
		{schedule.FieldDayOfWeek, "7", []int{0}},
		{schedule.FieldDayOfWeek, "0,7", []int{0}},
		{schedule.FieldDayOfWeek, "5-7", []int{0, 5, 6}},
		{schedule.FieldDayOfWeek, "mon-fri", []int{1, 2, 3, 4, 5}},
		{schedule.FieldDayOfWeek, "*", []int{0, 1, 2, 3, 4, 5, 6}},
		{schedule.FieldDayOfWeek, "*/2", []int{0, 2, 4, 6}},
		{schedule.FieldDayOfWeek, "1/2", []int{1, 3, 5}},
		{schedule.FieldDayOfWeek, "sat", []int{6}},
	} {
		t.Run(c.field+" "+c.text, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, values(t, c.field, c.text))
		})
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expr, field, token, msg string
	}{
		{"", "", "", "has 0 fields, want 5"},
		{"* * * *", "", "", "has 4 fields, want 5"},
		{"0 * * * * *", "", "", "there is no seconds field"},
		{"CRON_TZ=UTC 0 * * * *", "", "", "time zone prefix is not accepted"},
		{"TZ=UTC 0 * * *", "", "", "time zone prefix is not accepted"},
		{"@every 5m", "", "", "unknown macro"},
		{"@reboot", "", "", "unknown macro"},
		{"@DAILY", "", "", "unknown macro"},
		{"60 * * * *", schedule.FieldMinute, "60", "is out of range 0-59"},
		{"-1 * * * *", schedule.FieldMinute, "-1", "has an empty range end"},
		{"0 24 * * *", schedule.FieldHour, "24", "is out of range 0-23"},
		{"0 0 0 * *", schedule.FieldDayOfMonth, "0", "is out of range 1-31"},
		{"0 0 32 * *", schedule.FieldDayOfMonth, "32", "is out of range 1-31"},
		{"0 0 * 13 *", schedule.FieldMonth, "13", "is out of range 1-12"},
		{"0 0 * 0 *", schedule.FieldMonth, "0", "is out of range 1-12"},
		{"0 0 * * 8", schedule.FieldDayOfWeek, "8", "is out of range 0-7"},
		{"0 0 ? * *", schedule.FieldDayOfMonth, "?", "is not a number 1-31"},
		{"0 0 * * ?", schedule.FieldDayOfWeek, "?", "is not a number 0-7 or a name SUN-SAT"},
		{"0 0 L * *", schedule.FieldDayOfMonth, "L", "is not a number 1-31"},
		{"0 0 15W * *", schedule.FieldDayOfMonth, "15W", "is not a number 1-31"},
		{"0 0 * * 5L", schedule.FieldDayOfWeek, "5L", "is not a number"},
		{"0 0 * * 5#3", schedule.FieldDayOfWeek, "5#3", "is not a number"},
		{"0 0 * * MONDAY", schedule.FieldDayOfWeek, "MONDAY", "or a name SUN-SAT"},
		{"0 0 * JANUARY *", schedule.FieldMonth, "JANUARY", "or a name JAN-DEC"},
		{"0 JAN * * *", schedule.FieldHour, "JAN", "is not a number 0-23"},
		{"0 0 MON * *", schedule.FieldDayOfMonth, "MON", "is not a number 1-31"},
		{"*/0 * * * *", schedule.FieldMinute, "*/0", "has a step below 1"},
		{"*/-1 * * * *", schedule.FieldMinute, "*/-1", "has a step that is not a number"},
		{"*/ * * * *", schedule.FieldMinute, "*/", "has a step that is not a number"},
		{"*/x * * * *", schedule.FieldMinute, "*/x", "has a step that is not a number"},
		{"1/2/3 * * * *", schedule.FieldMinute, "1/2/3", "has a step that is not a number"},
		{"30-10 * * * *", schedule.FieldMinute, "30-10", "is a range that runs backwards (30 > 10)"},
		{"1-2-3 * * * *", schedule.FieldMinute, "2-3", "is not a number 0-59"},
		{"5- * * * *", schedule.FieldMinute, "5-", "has an empty range end"},
		{"*-5 * * * *", schedule.FieldMinute, "*", "is not a number 0-59"},
		{"1,,2 * * * *", schedule.FieldMinute, "1,,2", "has an empty list element"},
		{"1, * * * *", schedule.FieldMinute, "1,", "has an empty list element"},
		{"+5 * * * *", schedule.FieldMinute, "+5", "is not a number 0-59"},
		{"0 0 30 2 *", schedule.FieldDayOfMonth, "", "never occurs in the selected months"},
		{"0 0 31 4,6,9,11 *", schedule.FieldDayOfMonth, "", "never occurs in the selected months"},
	} {
		t.Run(c.expr, func(t *testing.T) {
			t.Parallel()
			_, err := schedule.Parse(c.expr)
			require.Error(t, err)
			require.ErrorIs(t, err, schedule.ErrInvalidCron)
			var ce *schedule.CronError
			require.True(t, errors.As(err, &ce))
			require.Equal(t, c.field, ce.Field)
			require.Equal(t, c.token, ce.Token)
			require.Contains(t, err.Error(), c.msg)
			require.Contains(t, err.Error(), fmt.Sprintf("%q", c.expr), "the message quotes the expression")
		})
	}
}

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expr, str string
		wallClock bool
	}{
		{"  0   2 * * *  ", "0 2 * * *", true},
		{"0\t2 * * *", "0 2 * * *", true},
		{"0 1-3 * * *", "0 1-3 * * *", true},
		{"0 1,5 * * *", "0 1,5 * * *", true},
		{"0 * * * *", "0 * * * *", false},
		{"0 */2 * * *", "0 */2 * * *", false},
		{"0 0-23/2 * * *", "0 0-23/2 * * *", false},
		{"0 5/2 * * *", "0 5/2 * * *", false},
		{"0 1,*/6 * * *", "0 1,*/6 * * *", false},
		{"@hourly", "@hourly", false},
		{"@daily", "@daily", true},
		{"@weekly", "@weekly", true},
		{"@monthly", "@monthly", true},
		{"@yearly", "@yearly", true},
		{"@annually", "@annually", true},
		{"0 0 31 2 1", "0 0 31 2 1", true},     // either-day: Mondays of February still fire
		{"0 0 29 2 *", "0 0 29 2 *", true},     // leap day
		{"0 0 30 1-2 *", "0 0 30 1-2 *", true}, // January has a 30th
	} {
		t.Run(c.expr, func(t *testing.T) {
			t.Parallel()
			s, err := schedule.Parse(c.expr)
			require.NoError(t, err)
			require.Equal(t, c.str, s.String())
			require.Equal(t, c.wallClock, s.WallClock())
			require.False(t, s.IsZero())
		})
	}
}

func TestMustParse(t *testing.T) {
	t.Parallel()
	require.Equal(t, "@daily", schedule.MustParse("@daily").String())
	require.Panics(t, func() { schedule.MustParse("nope") })
	require.True(t, schedule.Spec{}.IsZero())
}

func TestLoadZone(t *testing.T) {
	t.Parallel()
	loc, err := schedule.LoadZone("Australia/Lord_Howe")
	require.NoError(t, err)
	require.Equal(t, "Australia/Lord_Howe", loc.String())
	loc, err = schedule.LoadZone("UTC")
	require.NoError(t, err)
	require.Equal(t, time.UTC, loc)
	for _, bad := range []struct{ name, msg string }{
		{"", "time zone is empty"},
		{"  ", "time zone is empty"},
		{"Local", "depends on the host"},
		{"Mars/Olympus_Mons", `unknown time zone "Mars/Olympus_Mons"`},
		{"../../etc/passwd", "unknown time zone"},
	} {
		_, err := schedule.LoadZone(bad.name)
		require.ErrorContains(t, err, bad.msg, bad.name)
	}
}
