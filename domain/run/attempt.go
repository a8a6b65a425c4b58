package run

import "time"

// Outcome is how one attempt ended.
type Outcome string

// The outcomes of an attempt. Lost is an attempt whose lease expired and was reclaimed;
// HandedBack is one returned to pending by its own member (drain, outage), which gives
// its attempt back.
const (
	OutcomeCompleted  Outcome = "completed"
	OutcomeFailed     Outcome = "failed"
	OutcomeCancelled  Outcome = "cancelled"
	OutcomeLost       Outcome = "lost"
	OutcomeHandedBack Outcome = "handed_back"
)

// Attempt is one claim of a run. A hand-back gives the attempt number back, so the next
// claim carries the same N: the history shows both, and only the second counts.
type Attempt struct {
	N          int
	InstanceID string
	ClaimedAt  time.Time
	EndedAt    time.Time // zero while the attempt is open
	Outcome    Outcome   // "" while the attempt is open
	Error      *Error    // why a failed attempt failed; nil otherwise
}

// Open reports whether the attempt has not ended yet.
func (a Attempt) Open() bool { return a.EndedAt.IsZero() }

// outcomeOf is the attempt outcome that matches a terminal run status.
func outcomeOf(s Status) Outcome {
	switch s {
	case Completed:
		return OutcomeCompleted
	case Failed:
		return OutcomeFailed
	default:
		return OutcomeCancelled
	}
}
