package approvals

import (
	"fmt"
	"slices"

	"github.com/sluicehq/sluice/domain/run"
)

// Status is where a change request is in its life.
type Status string

// The statuses (SPEC §9.5).
const (
	Proposed Status = "proposed"
	Approved Status = "approved"
	Rejected Status = "rejected"
	Expired  Status = "expired"
)

// statuses lists every status in lifecycle order: the one list the transports' enums use.
var statuses = []Status{Proposed, Approved, Rejected, Expired}

// Statuses returns every change request status, in lifecycle order.
func Statuses() []Status { return slices.Clone(statuses) }

// transitions is the state machine: only a proposed request changes, once.
var transitions = map[Status][]Status{
	Proposed: {Approved, Rejected, Expired},
}

// ErrDecided: the change request is no longer proposed — approved, rejected or expired
// (conflict, 409: it wraps run.ErrConflict, so the transports' tables already map it).
var ErrDecided = fmt.Errorf("%w: the change request is no longer proposed", run.ErrConflict)

// Errors lists the package's sentinels for the transports' error tables.
func Errors() []error { return []error{ErrDecided} }

// Transition checks from → to against the table.
func Transition(from, to Status) error {
	if !slices.Contains(transitions[from], to) {
		return fmt.Errorf("%w: it is %s, so it cannot become %s", ErrDecided, from, to)
	}
	return nil
}

// ParseStatus reads a status filter.
func ParseStatus(s string) (Status, error) {
	if st := Status(s); slices.Contains(statuses, st) {
		return st, nil
	}
	return "", fmt.Errorf("%q is not a change request status: use proposed, approved, rejected or expired", s)
}
