package schedule_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/schedule"
)

// The oracle below decides, minute by real minute, whether an expression fires, stating
// the SPEC §9.1 rules directly on top of Spec.Matches (whose field reading the parse
// tests pin down). Next must agree with it exactly.

var propertyZones = []string{
	"America/New_York", "Europe/Berlin", "America/Sao_Paulo", "Australia/Lord_Howe",
	"Africa/Cairo", "Asia/Kolkata", "UTC", "Pacific/Chatham", "America/St_Johns",
	"Europe/Dublin", "Antarctica/Troll", "Pacific/Apia",
}

var (
	minutePool = []string{"*", "0", "30", "*/15", "*/7", "0,30", "5-20/5", "59", "10/20", "1-3", "45"}
	hourPool   = []string{"*", "*/2", "*/3", "0", "1", "2", "3", "23", "1-3", "0,2", "2/5", "0-23/4", "1,*/6", "0-3"}
	domPool    = []string{"*", "*", "*", "1", "1-15", "10-20", "31", "4,25", "*/10"}
	monthPool  = []string{"*", "*", "*", "3,10", "MAR-NOV", "*/2", "1-6", "4,10"}
	dowPool    = []string{"*", "*", "*", "1-5", "SUN", "6", "0,3", "fri", "*/2", "7"}
)

type oracle struct {
	expr  string
	spec  schedule.Spec
	fixed bool
	loc   *time.Location
}

func randomOracle(t *testing.T, r *rand.Rand, loc *time.Location) oracle {
	t.Helper()
	pick := func(pool []string) string { return pool[r.IntN(len(pool))] }
	return newOracle(t, loc, pick(minutePool), pick(hourPool), pick(domPool), pick(monthPool), pick(dowPool))
}

// nearOracle is a random expression likely to fire around the transition tr: fixed
// hours near the transition's local hour, and day fields that include its day.
func nearOracle(t *testing.T, r *rand.Rand, loc *time.Location, tr time.Time) oracle {
	t.Helper()
	pick := func(pool []string) string { return pool[r.IntN(len(pool))] }
	before := tr.Add(-time.Minute).In(loc)
	h := before.Hour()
	hours := []string{
		fmt.Sprint(h), fmt.Sprint((h + 1) % 24), fmt.Sprint((h + 23) % 24),
		fmt.Sprintf("%d,%d", h, (h+1)%24), "*", "*/2", pick(hourPool),
	}
	dom, month, dow := "*", "*", "*"
	switch r.IntN(4) {
	case 0:
		dom = fmt.Sprint(before.Day())
	case 1:
		dom, dow = fmt.Sprint(before.Day()), "3" // either-day
	case 2:
		dom, month, dow = pick(domPool), pick(monthPool), pick(dowPool)
	}
	return newOracle(t, loc, pick(minutePool), pick(hours), dom, month, dow)
}

func newOracle(t *testing.T, loc *time.Location, minute, hour, dom, month, dow string) oracle {
	t.Helper()
	expr := strings.Join([]string{minute, hour, dom, month, dow}, " ")
	spec, err := schedule.Parse(expr)
	require.NoError(t, err, expr)
	return oracle{expr: expr, spec: spec, fixed: !strings.ContainsAny(hour, "*/"), loc: loc}
}

func (o oracle) matches(t time.Time) bool { return o.spec.Matches(t, o.loc) }

func offset(t time.Time) time.Duration {
	_, off := t.Zone()
	return time.Duration(off) * time.Second
}

// fires is the rule of SPEC §9.1 for the real minute t.
func (o oracle) fires(t time.Time) bool {
	t = t.In(o.loc)
	if !o.fixed {
		return o.matches(t)
	}
	off := offset(t)
	// A repeated reading fires only the first time: look for an earlier instant that had
	// the same reading under a larger offset.
	first := true
	for k := 1; k <= 12 && first; k++ {
		e := t.Add(-time.Duration(k) * 15 * time.Minute)
		if oe := offset(e); oe > off {
			if twin := t.Add(-(oe - off)); offset(twin) == oe {
				first = false
			}
		}
	}
	if first && o.matches(t) {
		return true
	}
	// The first minute after a gap fires for every matching reading the gap removed.
	prev := t.Add(-time.Minute)
	if jump := off - offset(prev); jump > 0 {
		for r := time.Minute; r <= jump; r += time.Minute {
			// The removed reading, in a fixed zone that still shows it.
			if o.spec.Matches(prev.Add(r), time.FixedZone("gap", int(offset(prev)/time.Second))) {
				return true
			}
		}
	}
	return false
}

// oracleNext scans real minutes after `after` up to `limit`.
func (o oracle) oracleNext(after, limit time.Time) time.Time {
	for m := after.Truncate(time.Minute).Add(time.Minute); !m.After(limit); m = m.Add(time.Minute) {
		if o.fires(m) {
			return m
		}
	}
	return time.Time{}
}

// transitions lists the instants the zone's offset changes between from and to.
func transitions(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	prev := offset(from.In(loc))
	for t := from; t.Before(to); t = t.Add(time.Hour) {
		if o := offset(t.In(loc)); o != prev {
			lo := t.Add(-time.Hour)
			for offset(lo.Add(time.Minute).In(loc)) == prev {
				lo = lo.Add(time.Minute)
			}
			out = append(out, lo.Add(time.Minute))
			prev = o
		}
	}
	return out
}

// Around every transition of 2018–2027 in each zone (and from random starting points
// near it, on both sides and inside overlaps), Next agrees with the oracle.
func TestNextAgreesWithOracleAroundTransitions(t *testing.T) {
	t.Parallel()
	for i, name := range propertyZones {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			loc := zone(t, name)
			seed := uint64(20260308 + i)
			r := rand.New(rand.NewPCG(seed, seed))
			trans := transitions(loc, utc(t, "2018-01-01T00:00:00Z"), utc(t, "2028-01-01T00:00:00Z"))
			if name != "UTC" && name != "Asia/Kolkata" {
				require.NotEmpty(t, trans)
			}
			trans = append(trans, utc(t, "2024-02-29T12:00:00Z")) // and one ordinary day
			for _, tr := range trans {
				for range 4 {
					o := nearOracle(t, r, loc, tr)
					after := tr.Add(time.Duration(r.IntN(6*3600)-3*3600) * time.Second)
					limit := after.Add(30 * time.Hour)
					var got []time.Time
					for cur := after; ; {
						next := o.spec.Next(cur, loc)
						require.False(t, next.IsZero(), o.expr)
						require.True(t, next.After(cur), "%s: Next(%s) = %s is not after", o.expr, cur, next)
						if next.After(limit) {
							break
						}
						got = append(got, next)
						cur = next
					}
					var want []time.Time
					for cur := after; ; {
						next := o.oracleNext(cur, limit)
						if next.IsZero() {
							break
						}
						want = append(want, next)
						cur = next
					}
					require.Equal(t, fmtAll(want, loc), fmtAll(got, loc), "%s in %s from %s", o.expr, name, after.Format(time.RFC3339))
				}
			}
		})
	}
}

// From random instants over decades, NextN is strictly increasing and every instant it
// returns reads as a matching wall time — or is the end of a gap that swallowed one.
func TestNextIsIncreasingAndMatches(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 9))
	lo, hi := utc(t, "1990-01-01T00:00:00Z").Unix(), utc(t, "2060-01-01T00:00:00Z").Unix()
	for range 400 {
		loc := zone(t, propertyZones[r.IntN(len(propertyZones))])
		o := randomOracle(t, r, loc)
		after := time.Unix(lo+r.Int64N(hi-lo), 0)
		prev := after
		for _, next := range o.spec.NextN(after, loc, 25) {
			require.True(t, next.After(prev), "%s in %s: %s then %s", o.expr, loc, prev, next)
			require.Zero(t, next.Second(), "%s fires on whole minutes", o.expr)
			if !o.matches(next) {
				require.True(t, o.fixed, "%s in %s: %s does not match and the hour is not fixed", o.expr, loc, next)
				require.NotEqual(t, offset(next), offset(next.Add(-time.Minute)),
					"%s in %s: %s does not match and is not the end of a gap", o.expr, loc, next)
			}
			prev = next
		}
	}
}

func fmtAll(ts []time.Time, loc *time.Location) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = fmt.Sprintf("%s (%s)", t.UTC().Format(time.RFC3339), t.In(loc).Format("15:04 MST"))
	}
	return out
}
