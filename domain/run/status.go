package run

import (
	"fmt"
	"slices"
	"strings"
)

// Status is where a run is in its lifecycle.
type Status string

// The statuses of a run. StatusNew is a pseudo-status: a run is never stored as new; it
// names the state before creation so that the creation itself is a row of the transition
// table. (It cannot be called New: that is the constructor.)
const (
	StatusNew Status = "new"
	Queued    Status = "queued"
	Pending   Status = "pending"
	Running   Status = "running"
	Sharded   Status = "sharded"
	Completed Status = "completed"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
)

// transitions is the run lifecycle of SPEC §3. Every pair not listed is refused.
var transitions = map[Status][]Status{
	StatusNew: {Pending, Queued},
	Queued:    {Pending, Cancelled},
	Pending:   {Running, Cancelled, Failed},
	// Running → Pending is a requeue (lease expired) or a hand-back (drain, outage);
	// Running → Sharded is the coordinator's planning transaction.
	Running: {Completed, Failed, Cancelled, Pending, Sharded},
	Sharded: {Completed, Failed, Cancelled},
}

// stored lists the statuses a run can be stored in, in lifecycle order.
var stored = []Status{Queued, Pending, Running, Sharded, Completed, Failed, Cancelled}

// Statuses returns every status a stored run can have (StatusNew excluded), in lifecycle order.
func Statuses() []Status { return slices.Clone(stored) }

// CanTransition reports whether the lifecycle allows moving from → to.
func CanTransition(from, to Status) bool {
	return slices.Contains(transitions[from], to)
}

// Terminal reports whether s is an end state: completed, failed or cancelled.
func (s Status) Terminal() bool {
	return s == Completed || s == Failed || s == Cancelled
}

// Active reports whether a run in s holds its pipeline key: pending, running or sharded.
// A queued run is waiting for an active sibling to end, so it is not active itself.
func (s Status) Active() bool {
	return s == Pending || s == Running || s == Sharded
}

// Valid reports whether s is a status a stored run can have (StatusNew is not).
func (s Status) Valid() bool { return slices.Contains(stored, s) }

func (s Status) String() string { return string(s) }

// ParseStatus reads a stored status or a status filter. It refuses StatusNew: no run is ever
// stored in it.
func ParseStatus(s string) (Status, error) {
	st := Status(s)
	if !st.Valid() {
		names := make([]string, len(stored))
		for i, v := range stored {
			names[i] = string(v)
		}
		return "", fmt.Errorf("status %q is not a run status: use one of %s", s, strings.Join(names, ", "))
	}
	return st, nil
}

// TransitionError is a refused status change. It wraps ErrInvalidTransition.
type TransitionError struct {
	From, To Status
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("run cannot move from %s to %s", e.From, e.To)
}

// Unwrap makes errors.Is(err, ErrInvalidTransition) true.
func (e *TransitionError) Unwrap() error { return ErrInvalidTransition }
