package schedule

import (
	"fmt"
	"time"
)

// Summary stands for missed ticks recorded as one row: how many, the first and the last.
type Summary struct {
	Count int
	First time.Time
	Last  time.Time
}

// DueTicks decides what to do with the ticks of spec in loc that fell due in (after, now]:
// `after` is the last tick already handled, or StartBound for a schedule that never ticked.
//
// Without catch-up only the latest due tick is created; with it, up to maxCatchup latest
// ticks (clamped to 1..MaxCatchupRuns; validate it with ValidateMaxCatchup when the schedule
// is created). Both lists are oldest first. The older ticks were missed: up to
// MaxSkippedRows of them, the most recent, are returned one by one in skipped; any older
// still are folded into summary (nil when there are none), so the history reads, in time
// order: summary, skipped, create.
//
// It walks every due tick, so its cost grows with the outage (a year of minutes takes
// about a tenth of a second).
func DueTicks(spec Spec, loc *time.Location, after, now time.Time, catchup bool, maxCatchup int) (create, skipped []time.Time, summary *Summary) {
	keep := 1
	if catchup {
		keep = min(max(maxCatchup, 1), MaxCatchupRuns)
	}
	// The newest `window` ticks are all that can be listed; the one before them is the
	// summary's last.
	window := keep + MaxSkippedRows + 1
	var (
		recent []time.Time
		total  int
		first  time.Time
	)
	for t := spec.Next(after, loc); !t.IsZero() && !t.After(now); t = spec.Next(t, loc) {
		if total == 0 {
			first = t
		}
		total++
		recent = append(recent, t)
		if len(recent) >= 2*window {
			recent = append(recent[:0], recent[len(recent)-window:]...)
		}
	}
	if total == 0 {
		return nil, nil, nil
	}
	if len(recent) > window {
		recent = recent[len(recent)-window:]
	}
	n := min(keep, total)
	create = append([]time.Time(nil), recent[len(recent)-n:]...)
	recent = recent[:len(recent)-n]
	missed := total - n
	listed := min(missed, MaxSkippedRows)
	if listed > 0 {
		skipped = append([]time.Time(nil), recent[len(recent)-listed:]...)
	}
	if folded := missed - listed; folded > 0 {
		summary = &Summary{Count: folded, First: first, Last: recent[len(recent)-listed-1]}
	}
	return create, skipped, summary
}

// StartBound is the `after` of a schedule that has never ticked: just before local
// midnight of startDate (YYYY-MM-DD, inclusive) in loc, or createdAt when startDate is
// empty (ticks strictly after creation). A midnight that falls in a DST gap starts the
// day at the gap's end. The bound sits a second before the day, which no tick can
// occupy, so it survives storage that rounds to microseconds.
func StartBound(startDate string, createdAt time.Time, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	if startDate == "" {
		return createdAt.In(loc), nil
	}
	d, err := time.Parse(time.DateOnly, startDate)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: start_date: %q is not a date like 2026-03-08", ErrInvalidSchedule, startDate)
	}
	return firstInstant(d, loc).Add(-time.Second), nil
}

// RunKey is the run key of the tick of scheduleID at instant: unique per schedule and
// instant, so a tick created twice (restart, new leader) is the same run, while the ticks
// of two schedules of one template (say, with different params) at the same instant are
// two runs.
func RunKey(scheduleID string, instant time.Time) string {
	return RunKeyPrefix(scheduleID) + instant.UTC().Format("2006-01-02T15:04:05Z")
}

// RunKeyPrefix starts the run key of every tick of scheduleID: the runs of one schedule
// are the runs of its pipeline key whose run key has this prefix, which is how overlap is
// judged per schedule.
func RunKeyPrefix(scheduleID string) string {
	return "schedule:" + scheduleID + ":"
}
