package secret

import (
	"fmt"
	"slices"

	"github.com/sluicehq/sluice/domain/run"
)

// SealedSecret is one secret value as the history keeps it: only ciphertext, apart from
// the run record. The vault binds OwnerID and N into the ciphertext, so moving it to
// another owner or index fails to open.
type SealedSecret struct {
	OwnerID    string // the run (or template, change request) the value belongs to
	N          int    // its index: the N of ${sealed:N}
	Ciphertext []byte // key id, format version, nonce and sealed bytes, as the vault wrote them
}

// State is where a sealed secret is in its lifecycle (SPEC §3).
type State string

// The states of a sealed secret. Opened means some attempt (or shard) holds the plaintext
// in memory; the stored row stays ciphertext throughout.
const (
	Sealed  State = "sealed"
	Opened  State = "opened"
	Deleted State = "deleted"
)

// transitions: sealed → opened (per attempt) → deleted once the run — for a sharded run,
// the parent — is terminal. Opened → opened is another attempt or shard opening it too;
// opened → sealed is an attempt ending and dropping the plaintext, so a retry opens it
// again. A run cancelled before any claim deletes a secret never opened.
var transitions = map[State][]State{
	Sealed: {Opened, Deleted},
	Opened: {Opened, Sealed, Deleted},
}

var states = []State{Sealed, Opened, Deleted}

// States returns every sealed-secret state.
func States() []State { return slices.Clone(states) }

// CanTransition reports whether the lifecycle allows moving from → to.
func CanTransition(from, to State) bool { return slices.Contains(transitions[from], to) }

// Transition returns to when the lifecycle allows it, and a *TransitionError otherwise.
func Transition(from, to State) (State, error) {
	if !CanTransition(from, to) {
		return from, &TransitionError{From: from, To: to}
	}
	return to, nil
}

// TransitionError is a refused state change; it wraps run.ErrInvalidTransition.
type TransitionError struct {
	From, To State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("sealed secret cannot move from %s to %s", e.From, e.To)
}

// Unwrap makes errors.Is(err, run.ErrInvalidTransition) true.
func (e *TransitionError) Unwrap() error { return run.ErrInvalidTransition }
