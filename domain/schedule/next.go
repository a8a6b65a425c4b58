package schedule

import (
	"time"
)

// SearchYears bounds how far Next looks ahead. The Gregorian calendar repeats every 400
// years, so any date a parsed Spec can match occurs within it (a leap day on a given
// weekday can be 40 years away). Next returns the zero time only when every matching
// minute in that span falls inside a DST gap under the real-instant rules.
const SearchYears = 400

// Next is the first instant strictly after `after` at which s fires in loc (nil means
// UTC), or the zero time when none exists within SearchYears. The result is in loc.
//
// The instants a Spec fires at form one fixed set, whatever `after` is, so walking it
// with Next never repeats or skips a tick, and two schedulers computing it agree.
func (s Spec) Next(after time.Time, loc *time.Location) time.Time {
	if s.IsZero() {
		return time.Time{}
	}
	if loc == nil {
		loc = time.UTC
	}
	after = after.In(loc)
	horizon := wall(after).AddDate(SearchYears, 0, 0)
	if s.wallClock {
		return s.nextWallClock(after, loc, horizon)
	}
	return s.nextInstant(after, loc, horizon)
}

// NextN is the next n instants after `after`, oldest first; fewer when Next runs out.
func (s Spec) NextN(after time.Time, loc *time.Location, n int) []time.Time {
	out := make([]time.Time, 0, min(max(n, 0), 1024))
	for len(out) < n {
		t := s.Next(after, loc)
		if t.IsZero() {
			break
		}
		out = append(out, t)
		after = t
	}
	return out
}

// nextInstant applies the real-instant rules: within each stretch of constant UTC offset
// wall time and real time move together, so the first matching wall minute in the
// stretch is the answer; minutes a gap removes belong to no stretch.
func (s Spec) nextInstant(after time.Time, loc *time.Location, horizon time.Time) time.Time {
	st := stretchAt(after)
	from := wall(after).Add(time.Nanosecond) // strictly after
	for {
		limit := horizon
		if !st.end.IsZero() {
			// The reading `end` would have had if this stretch went on: where it stops.
			if endWall := st.end.UTC().Add(time.Duration(st.off) * time.Second); endWall.Before(limit) {
				limit = endWall
			}
		}
		if w, ok := s.nextWall(from, limit); ok {
			return fromWall(w, st.off, loc)
		}
		if st.end.IsZero() || !limit.Before(horizon) {
			return time.Time{}
		}
		st = st.following(loc)
		from = wall(st.start.In(loc))
	}
}

// nextWallClock applies the wall-clock rules: each matching wall minute maps to its first
// occurrence, or to the end of the gap that swallowed it. That map never goes backwards
// as wall time goes forwards, so the first matching minute whose instant is after
// `after` is the answer. Starting at after's own reading is safe: earlier readings map
// to earlier instants; only inside a fall-back overlap can a few later readings still
// map to or before `after`, which the loop steps over.
func (s Spec) nextWallClock(after time.Time, loc *time.Location, horizon time.Time) time.Time {
	w := wall(after).Truncate(time.Minute)
	for {
		var ok bool
		if w, ok = s.nextWall(w, horizon); !ok {
			return time.Time{}
		}
		if t := firstInstant(w, loc); t.After(after) {
			return t
		}
		w = w.Add(time.Minute)
	}
}

// nextWall is the first wall reading ≥ from (rounded up to a whole minute) and before
// limit that s selects. Wall readings are times in UTC standing for local readings.
// It skips whole months, days and hours that cannot match, so years cost little.
func (s Spec) nextWall(from, limit time.Time) (time.Time, bool) {
	w := ceilMinute(from)
	for w.Before(limit) {
		y, mo, d := w.Date()
		if s.month&(1<<int(mo)) == 0 {
			w = time.Date(y, mo+1, 1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if !s.dayMatches(w) {
			w = time.Date(y, mo, d+1, 0, 0, 0, 0, time.UTC)
			continue
		}
		h := nextBit(s.hour, w.Hour())
		if h < 0 {
			w = time.Date(y, mo, d+1, 0, 0, 0, 0, time.UTC)
			continue
		}
		m := 0
		if h == w.Hour() {
			m = w.Minute()
		}
		mi := nextBit(s.minute, m)
		if mi < 0 {
			w = time.Date(y, mo, d, h+1, 0, 0, 0, time.UTC)
			continue
		}
		w = time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
		return w, w.Before(limit)
	}
	return time.Time{}, false
}

func (s Spec) dayMatches(w time.Time) bool {
	dom := s.dom&(1<<w.Day()) != 0
	dow := s.dow&(1<<int(w.Weekday())) != 0
	if s.domAny || s.dowAny {
		return dom && dow
	}
	return dom || dow
}

func ceilMinute(w time.Time) time.Time {
	if t := w.Truncate(time.Minute); !t.Equal(w) {
		return t.Add(time.Minute)
	}
	return w
}
