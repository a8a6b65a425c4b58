package backoff

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Policy is an exponential backoff: the n-th retry waits around Initial·Multiplier^(n-1),
// never more than Max.
type Policy struct {
	Initial    time.Duration
	Max        time.Duration
	Multiplier float64 // ≥ 1; 0 means 2
}

// Validate names the first field that makes the policy unusable.
func (p Policy) Validate() error {
	switch {
	case p.Initial <= 0:
		return errors.New("initial_secs must be > 0")
	case p.Max < p.Initial:
		return fmt.Errorf("max_secs (%s) must be ≥ initial_secs (%s)", p.Max, p.Initial)
	case p.Multiplier != 0 && p.Multiplier < 1:
		return fmt.Errorf("multiplier must be ≥ 1, got %g", p.Multiplier)
	}
	return nil
}

// Ceiling is the un-jittered delay before retry n (n ≥ 1).
func (p Policy) Ceiling(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	m := p.Multiplier
	if m == 0 {
		m = 2
	}
	d := float64(p.Initial) * math.Pow(m, float64(n-1))
	if math.IsInf(d, 0) || d > float64(p.Max) {
		return p.Max
	}
	return time.Duration(d)
}

// Delay is the wait before retry n with "equal jitter": half the ceiling is fixed and the other
// half scaled by draw ∈ [0, 1). The result lies in [Ceiling(n)/2, Ceiling(n)), so retries of
// many runs that failed together spread out without any of them retrying early.
func (p Policy) Delay(n int, draw float64) time.Duration {
	if draw < 0 {
		draw = 0
	}
	if draw >= 1 {
		draw = math.Nextafter(1, 0)
	}
	c := p.Ceiling(n)
	half := c / 2
	return half + time.Duration(draw*float64(c-half))
}
