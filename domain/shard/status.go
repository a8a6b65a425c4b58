package shard

import (
	"fmt"
	"slices"

	"github.com/sluicehq/sluice/domain/run"
)

// Status is where a shard is in its lifecycle. The values match the run statuses of the
// same name, so the history and the API use one vocabulary.
type Status string

// The statuses of a shard.
const (
	Pending   Status = "pending"
	Running   Status = "running"
	Completed Status = "completed"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
)

// transitions is the shard lifecycle of SPEC §3. Running → Pending is a requeue or a
// hand-back, as for runs. Every pair not listed is refused.
var transitions = map[Status][]Status{
	Pending: {Running, Cancelled},
	Running: {Completed, Failed, Cancelled, Pending},
}

var statuses = []Status{Pending, Running, Completed, Failed, Cancelled}

// Statuses returns every shard status in lifecycle order.
func Statuses() []Status { return slices.Clone(statuses) }

// CanTransition reports whether the lifecycle allows moving from → to.
func CanTransition(from, to Status) bool { return slices.Contains(transitions[from], to) }

// Terminal reports whether s is an end state.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Valid reports whether s is a shard status.
func (s Status) Valid() bool { return slices.Contains(statuses, s) }

// ParseStatus reads a stored shard status.
func ParseStatus(s string) (Status, error) {
	if st := Status(s); st.Valid() {
		return st, nil
	}
	return "", fmt.Errorf("status %q is not a shard status: use one of pending, running, completed, failed, cancelled", s)
}

// TransitionError is a refused shard status change. It wraps run.ErrInvalidTransition so
// every transport maps run and shard refusals alike.
type TransitionError struct {
	From, To Status
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("shard cannot move from %s to %s", e.From, e.To)
}

// Unwrap makes errors.Is(err, run.ErrInvalidTransition) true.
func (e *TransitionError) Unwrap() error { return run.ErrInvalidTransition }
