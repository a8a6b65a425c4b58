package schedule

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// MaxBackfillWindows bounds one backfill (SPEC §9.4).
const MaxBackfillWindows = 10000

// Period is an ISO 8601 duration (P1D, PT6H, P1M, P1W, P1DT12H). A backfill steps it in
// wall time, so P1D is one calendar day even across a DST change.
type Period struct {
	Years, Months, Days int
	Clock               time.Duration // the T part: hours, minutes, seconds
	text                string
}

var periodText = regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

// ParsePeriod reads an ISO 8601 duration of whole units; a zero period is refused.
func ParsePeriod(s string) (Period, error) {
	m := periodText.FindStringSubmatch(s)
	if m == nil || s == "P" || s[len(s)-1] == 'T' {
		return Period{}, fmt.Errorf("%w: window: %q is not an ISO 8601 duration such as P1D, PT6H, P1W or P1M", ErrInvalidSchedule, s)
	}
	n := make([]int, len(m))
	for i := 1; i < len(m); i++ {
		if m[i] == "" {
			continue
		}
		v, err := strconv.Atoi(m[i])
		if err != nil || v > 100000 {
			return Period{}, fmt.Errorf("%w: window: %q has a part out of range", ErrInvalidSchedule, s)
		}
		n[i] = v
	}
	p := Period{Years: n[1], Months: n[2], Days: 7*n[3] + n[4],
		Clock: time.Duration(n[5])*time.Hour + time.Duration(n[6])*time.Minute + time.Duration(n[7])*time.Second, text: s}
	if p.Years == 0 && p.Months == 0 && p.Days == 0 && p.Clock == 0 {
		return Period{}, fmt.Errorf("%w: window: %q is empty; give a positive duration such as P1D", ErrInvalidSchedule, s)
	}
	return p, nil
}

// String is the period as parsed.
func (p Period) String() string { return p.text }

// Window is one half-open backfill window [Start, End).
type Window struct{ Start, End time.Time }

// Windows cuts [from, to) into windows stepped by p in wall time in loc (nil = UTC): the
// i-th starts at the first instant whose reading is from's reading plus i periods (the
// end of a DST gap when that reading does not exist); the last ends at `to`. A step that
// a DST change makes empty is left out. More than MaxBackfillWindows is an error.
func Windows(from, to time.Time, p Period, loc *time.Location) ([]Window, error) {
	if loc == nil {
		loc = time.UTC
	}
	if !from.Before(to) {
		return nil, fmt.Errorf("%w: to: %s is not after from %s", ErrInvalidSchedule,
			to.UTC().Format(time.RFC3339), from.UTC().Format(time.RFC3339))
	}
	base := wall(from.In(loc))
	var out []Window
	start := from
	for i := 1; start.Before(to); i++ {
		next := firstInstant(base.AddDate(i*p.Years, i*p.Months, i*p.Days).Add(time.Duration(i)*p.Clock), loc)
		if !next.After(start) {
			continue // a wall step that a gap swallowed
		}
		if len(out) == MaxBackfillWindows {
			return nil, fmt.Errorf("%w: window: %s from %s to %s makes more than %d windows; use a longer window or a shorter range",
				ErrInvalidSchedule, p, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), MaxBackfillWindows)
		}
		end := next
		if end.After(to) {
			end = to
		}
		out = append(out, Window{Start: start.In(loc), End: end.In(loc)})
		start = next
	}
	return out, nil
}
