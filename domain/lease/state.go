package lease

import (
	"fmt"
	"slices"

	"github.com/sluicehq/sluice/domain/run"
)

// State is where a lease is in its lifecycle (SPEC §3).
type State string

// The lease states. Released, Reclaimed and Lost end a lease; a new claim starts a new
// lease with a higher epoch.
const (
	Held      State = "held"      // granted by a claim
	Renewed   State = "renewed"   // extended by a renewal that returned its id
	Released  State = "released"  // ended by its holder: finish or hand-back
	Expired   State = "expired"   // ran past expires_at by the database clock
	Reclaimed State = "reclaimed" // an expired lease taken back by any member's lease tick
	// Lost: the holder learned it no longer holds the lease (a renewal that did not
	// return its id, a fenced write of zero rows).
	Lost State = "lost"
)

// transitions is the lease lifecycle: held → renewed → (released | expired → reclaimed |
// lost). A lease can end before its first renewal, renewals repeat, and an expired lease
// whose holder tries a write is lost to it.
var transitions = map[State][]State{
	Held:    {Renewed, Released, Expired, Lost},
	Renewed: {Renewed, Released, Expired, Lost},
	Expired: {Reclaimed, Lost},
}

var states = []State{Held, Renewed, Released, Expired, Reclaimed, Lost}

// States returns every lease state.
func States() []State { return slices.Clone(states) }

// CanTransition reports whether the lifecycle allows moving from → to.
func CanTransition(from, to State) bool { return slices.Contains(transitions[from], to) }

// Final reports whether s ends the lease.
func (s State) Final() bool { return s == Released || s == Reclaimed || s == Lost }

// Transition returns to when the lifecycle allows it, and a *TransitionError otherwise.
func Transition(from, to State) (State, error) {
	if !CanTransition(from, to) {
		return from, &TransitionError{From: from, To: to}
	}
	return to, nil
}

// TransitionError is a refused lease state change; it wraps run.ErrInvalidTransition.
type TransitionError struct {
	From, To State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("lease cannot move from %s to %s", e.From, e.To)
}

// Unwrap makes errors.Is(err, run.ErrInvalidTransition) true.
func (e *TransitionError) Unwrap() error { return run.ErrInvalidTransition }
