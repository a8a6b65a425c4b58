package pool

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrUnserved is wrapped by UnservedError.
var ErrUnserved = errors.New("pool unserved")

// UnservedError is a submission to a pool no live, non-draining member serves.
type UnservedError struct {
	Pool   string
	Served []string // pools live members serve, sorted
}

func (e *UnservedError) Error() string {
	served := "no live member serves any pool"
	if len(e.Served) > 0 {
		served = "live members serve " + strings.Join(e.Served, ", ")
	}
	return fmt.Sprintf("pool %q is not served by any live member (%s): start a member with --pool %s", e.Pool, served, e.Pool)
}

// Unwrap makes errors.Is(err, ErrUnserved) true.
func (e *UnservedError) Unwrap() error { return ErrUnserved }

// Admit accepts a submission to pool when a live, non-draining member serves it; served
// is what member.ServedPools returns (or a single server's own pools).
func Admit(pool string, served []string) error {
	if slices.Contains(served, pool) {
		return nil
	}
	s := slices.Clone(served)
	slices.Sort(s)
	return &UnservedError{Pool: pool, Served: slices.Compact(s)}
}

// Phase is how admission sees a pool (SPEC §3): served, unserved since some instant, or
// unserved for longer than --pool-wait-timeout-secs, when its pending runs fail.
type Phase string

// The pool phases.
const (
	PhaseServed   Phase = "served"
	PhaseUnserved Phase = "unserved"
	PhaseTimedOut Phase = "timed_out"
)

// UnservedSince is when a pending run's wait for its pool started: the latest lease expiry
// among members that served the pool, or the run's creation when that is later (a run
// cannot have waited before it existed). lastMemberExpiry is zero when no member ever
// served the pool.
func UnservedSince(lastMemberExpiry, runCreated time.Time) time.Time {
	if lastMemberExpiry.After(runCreated) {
		return lastMemberExpiry
	}
	return runCreated
}

// TimedOut reports whether a pool unserved since unservedSince has waited at least wait
// at now. wait <= 0 means --pool-wait-timeout-secs is off: runs wait forever.
func TimedOut(unservedSince, now time.Time, wait time.Duration) bool {
	return wait > 0 && !now.Before(unservedSince.Add(wait))
}

// Observe places a pool in its phase at now.
func Observe(served bool, unservedSince, now time.Time, wait time.Duration) Phase {
	switch {
	case served:
		return PhaseServed
	case TimedOut(unservedSince, now, wait):
		return PhaseTimedOut
	default:
		return PhaseUnserved
	}
}
