package schedule

import "time"

// These helpers serve the tests only: production parses user input with Parse and asks Next
// for instants, so they live here rather than in the package's exported surface.

// MustParse is Parse for expressions known to be valid (test tables); it panics on error.
func MustParse(expr string) Spec {
	s, err := Parse(expr)
	if err != nil {
		panic(err)
	}
	return s
}

// WallClock reports whether the fixed-hour (wall-clock) DST rules apply to s; otherwise
// the real-instant rules do.
func (s Spec) WallClock() bool { return s.wallClock }

// Matches reports whether the wall reading of t in loc is selected by s (ignoring
// seconds). It says nothing about the DST rules; Next applies those.
func (s Spec) Matches(t time.Time, loc *time.Location) bool {
	if loc == nil {
		loc = time.UTC
	}
	w := wall(t.In(loc))
	return s.month&(1<<int(w.Month())) != 0 && s.dayMatches(w) &&
		s.hour&(1<<w.Hour()) != 0 && s.minute&(1<<w.Minute()) != 0
}
