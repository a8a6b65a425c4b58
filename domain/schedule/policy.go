package schedule

import (
	"errors"
	"fmt"
)

// ErrInvalidSchedule is matched (errors.Is) by the errors of a schedule's settings
// other than its cron expression (which returns ErrInvalidCron).
var ErrInvalidSchedule = errors.New("invalid schedule")

// Limits and defaults of SPEC §9.2.
const (
	DefaultMaxCatchup = 1
	MaxCatchupRuns    = 1000
	// MaxSkippedRows is how many missed ticks are recorded one by one; older ones are
	// folded into one Summary so an outage of years cannot flood the tick table.
	MaxSkippedRows = 1000
)

// Reasons a tick is recorded skipped.
const (
	ReasonMissed  = "missed while no scheduler was running"
	ReasonOverlap = "previous run still active"
	ReasonPaused  = "paused"
)

// ReasonPoolUnserved is the reason of a tick whose pool no member serves (SPEC §5.4).
func ReasonPoolUnserved(pool string) string { return "pool unserved: " + pool }

// Outcome is what became of a due tick; the values are the metric's `outcome` label.
type Outcome string

const (
	OutcomeCreated Outcome = "created"
	OutcomeQueued  Outcome = "queued"
	OutcomeSkipped Outcome = "skipped"
)

// Outcomes lists every outcome: the statuses a recorded tick may have (the history's
// CHECK constraint on them is held equal to this list).
func Outcomes() []Outcome { return []Outcome{OutcomeCreated, OutcomeQueued, OutcomeSkipped} }

// OverlapPolicy says what a due tick does while its pipeline key has queued or active
// work.
type OverlapPolicy string

const (
	OverlapSkip  OverlapPolicy = "skip"
	OverlapQueue OverlapPolicy = "queue"
)

// ParseOverlapPolicy reads overlap_policy; empty means the default, skip.
func ParseOverlapPolicy(s string) (OverlapPolicy, error) {
	if s == "" {
		return OverlapSkip, nil
	}
	p := OverlapPolicy(s)
	if err := p.Validate(); err != nil {
		return "", err
	}
	return p, nil
}

// Validate refuses anything but skip and queue.
func (p OverlapPolicy) Validate() error {
	switch p {
	case OverlapSkip, OverlapQueue:
		return nil
	}
	return fmt.Errorf("%w: overlap_policy: %q is not skip or queue", ErrInvalidSchedule, string(p))
}

// Decide is the overlap decision for a due tick; busy says the pipeline key has queued
// or active work, read in the same transaction that will create the run. The reason is
// set only for OutcomeSkipped. An invalid policy decides like skip, the default.
func (p OverlapPolicy) Decide(busy bool) (Outcome, string) {
	switch {
	case !busy:
		return OutcomeCreated, ""
	case p == OverlapQueue:
		return OutcomeQueued, ""
	}
	return OutcomeSkipped, ReasonOverlap
}

// ValidateMaxCatchup refuses a max_catchup_runs outside 1..1000.
func ValidateMaxCatchup(n int) error {
	if n < 1 || n > MaxCatchupRuns {
		return fmt.Errorf("%w: max_catchup_runs: %d is outside 1..%d", ErrInvalidSchedule, n, MaxCatchupRuns)
	}
	return nil
}
