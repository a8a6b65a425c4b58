package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	// Zone data inside the binary, so a schedule means the same on every host.
	_ "time/tzdata"
)

// LoadZone resolves an IANA zone name ("Europe/Berlin", "UTC"). "Local" and the empty
// name are refused: a schedule must not change meaning with the host it runs on.
func LoadZone(name string) (*time.Location, error) {
	switch strings.TrimSpace(name) {
	case "":
		return nil, errors.New("time zone is empty; use an IANA name such as UTC or Europe/Berlin")
	case "Local":
		return nil, errors.New(`time zone "Local" depends on the host; use an IANA name such as UTC or Europe/Berlin`)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q; use an IANA name such as UTC or Europe/Berlin", name)
	}
	return loc, nil
}

// wall is t's local reading, as a time in UTC (so calendar arithmetic ignores DST).
func wall(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	return time.Date(y, mo, d, h, mi, sec, t.Nanosecond(), time.UTC)
}

// fromWall is the instant whose reading is w under UTC offset off (seconds east).
func fromWall(w time.Time, off int, loc *time.Location) time.Time {
	return w.Add(-time.Duration(off) * time.Second).In(loc)
}

func offsetOf(t time.Time) int {
	_, off := t.Zone()
	return off
}

// stretch is a span of real time [start, end) with one UTC offset; a zero end means the
// offset holds from then on. Consecutive stretches may share an offset.
type stretch struct {
	start, end time.Time
	off        int // seconds east of UTC
}

func stretchAt(t time.Time) stretch {
	start, _ := t.ZoneBounds()
	return stretch{start: start, end: stretchEnd(t), off: offsetOf(t)}
}

// following is the stretch that begins where s ends (s.end must not be zero). Its start
// is s.end rather than what ZoneBounds says, so stretches always tile time.
func (s stretch) following(loc *time.Location) stretch {
	t := s.end.In(loc)
	return stretch{start: s.end, end: stretchEnd(t), off: offsetOf(t)}
}

func (s stretch) contains(t time.Time) bool {
	return (s.start.IsZero() || !t.Before(s.start)) && (s.end.IsZero() || t.Before(s.end))
}

// stretchEnd is where the offset in effect at t may next change. time.ZoneBounds, past a
// zone's last listed transition, ends a leap year's final stretch a day early — at
// 31 December, which can be t itself — so a bound that does not move forward is
// replaced by probing an hour at a time until the next stretch shows its start.
func stretchEnd(t time.Time) time.Time {
	_, end := t.ZoneBounds()
	for probe := t; !end.IsZero() && !end.After(t); {
		probe = probe.Add(time.Hour)
		start, e := probe.ZoneBounds()
		if start.After(t) {
			return start
		}
		end = e
	}
	return end
}

// window is how far a wall reading can be from the instant it names: UTC offsets stay
// within about ±15 hours.
const window = 16 * time.Hour

// firstInstant is the first instant whose reading in loc is w; when no instant has that
// reading (a spring-forward gap), it is the first whole minute after the gap. It walks
// the zone's stretches of constant offset around w rather than trusting time.Date,
// whose choice at transitions is documented as unspecified.
func firstInstant(w time.Time, loc *time.Location) time.Time {
	s := stretchAt(w.Add(-window).In(loc))
	s.start = time.Time{} // w is far past the first stretch's start; ignore it
	stop := w.Add(window)
	var gapEnd time.Time
	for {
		cand := w.Add(-time.Duration(s.off) * time.Second)
		switch {
		case s.contains(cand):
			return cand.In(loc)
		case gapEnd.IsZero() && !s.start.IsZero() && cand.Before(s.start):
			// w lies after the previous stretch's last reading and before this one's first.
			gapEnd = s.start.In(loc)
		}
		if s.end.IsZero() || s.end.After(stop) {
			break
		}
		s = s.following(loc)
	}
	if gapEnd.IsZero() {
		// Unreachable with real zone data; answer the naive reading rather than nothing.
		return fromWall(w, offsetOf(w.In(loc)), loc)
	}
	r := wall(gapEnd)
	return gapEnd.Add(ceilMinute(r).Sub(r))
}
