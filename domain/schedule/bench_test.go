package schedule_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/domain/schedule"
)

func benchmarkNext(b *testing.B, expr, zoneName string) {
	loc, err := schedule.LoadZone(zoneName)
	if err != nil {
		b.Fatal(err)
	}
	spec := schedule.MustParse(expr)
	cur := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		cur = spec.Next(cur, loc)
	}
}

func BenchmarkNextEveryMinute(b *testing.B) { benchmarkNext(b, "* * * * *", "America/New_York") }
func BenchmarkNextDailyFixed(b *testing.B)  { benchmarkNext(b, "30 2 * * *", "America/New_York") }
func BenchmarkNextLeapDay(b *testing.B)     { benchmarkNext(b, "0 0 29 2 *", "Europe/Berlin") }

// A year of missed minutes, the worst outage DueTicks is likely to meet.
func BenchmarkDueTicksYearOfMinutes(b *testing.B) {
	spec := schedule.MustParse("* * * * *")
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		schedule.DueTicks(spec, time.UTC, from, from.AddDate(1, 0, 0), true, 10)
	}
}
