package run

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// transition is the only place a run's status changes.
func (r *Run) transition(to Status) error {
	if !CanTransition(r.status, to) {
		return &TransitionError{From: r.status, To: to}
	}
	r.status = to
	return nil
}

// Claim gives the run to owner: pending → running. A claim spends an attempt and opens an
// attempt record; the first claim also sets the start time. A run waiting for its retry
// is not claimed before it is due (ErrConflict).
func (r *Run) Claim(owner string, at time.Time) error {
	if owner == "" {
		return errors.New("claim needs the instance id of the claiming member")
	}
	if r.status == Pending && at.Before(r.notBefore) {
		return fmt.Errorf("run waits for its retry until %s: %w", r.notBefore.UTC().Format(time.RFC3339), ErrConflict)
	}
	if err := r.transition(Running); err != nil {
		return err
	}
	r.notBefore = time.Time{}
	// A cancel request is addressed to the owner of an attempt; a new attempt starts
	// without one (a run that is cancelled while pending ends at once instead).
	r.cancelRequested = false
	r.attempt++
	r.owner = owner
	r.claimedAt = at
	if r.startedAt.IsZero() {
		r.startedAt = at
	}
	r.attempts = append(r.attempts, Attempt{N: r.attempt, InstanceID: owner, ClaimedAt: at})
	return nil
}

// Finish ends the run in a terminal status. A failed run needs an error with a known
// code; a completed run must not carry one; a cancelled run may explain itself.
// From pending, the only failure is pool_unavailable (SPEC §5.5): a run that never ran
// cannot have failed any other way.
func (r *Run) Finish(status Status, e *Error, at time.Time) error {
	if !status.Terminal() {
		return fmt.Errorf("finish needs a terminal status (completed, failed or cancelled), got %q", status)
	}
	switch {
	case status == Completed && e != nil:
		return fmt.Errorf("a completed run carries no error (got %s)", e.Code)
	case status == Failed && e == nil:
		return errors.New("a failed run needs an error code")
	case e != nil && !e.Code.Valid():
		return fmt.Errorf("error code %q is not a run error code", e.Code)
	case r.status == Pending && status == Failed && e.Code != CodePoolUnavailable:
		return fmt.Errorf("a pending run can fail only with %s, not %s", CodePoolUnavailable, e.Code)
	}
	if err := r.transition(status); err != nil {
		return err
	}
	r.end(outcomeOf(status), e, at)
	r.err = cloneError(e)
	r.finishedAt = at
	return nil
}

// RequestCancel flags a running or sharded run for cancellation; its owner (or, for a
// sharded parent, each shard's owner) stops it at a page boundary. A queued or pending
// run has no owner to signal: cancel it with Cancel.
func (r *Run) RequestCancel() error {
	switch {
	case r.status == Running || r.status == Sharded:
		r.cancelRequested = true
		return nil
	case r.status == Queued || r.status == Pending:
		return fmt.Errorf("run is %s: nothing executes it, so cancel it directly instead of requesting a cancel", r.status)
	default:
		return &TransitionError{From: r.status, To: Cancelled}
	}
}

// Cancel ends the run cancelled: at once for a queued or pending run, and after the
// owner flushed at a page boundary for a running or sharded one.
func (r *Run) Cancel(at time.Time) error {
	if err := r.transition(Cancelled); err != nil {
		return err
	}
	r.end(OutcomeCancelled, nil, at)
	r.finishedAt = at
	return nil
}

// Requeue handles a running run whose lease expired (SPEC §3): the attempt is lost; a
// requested cancel ends the run cancelled; below the attempt cap it returns to pending;
// at the cap it ends failed (poisoned), since a run that keeps losing its member would
// otherwise take members down one after another.
func (r *Run) Requeue(at time.Time) error {
	if r.status != Running {
		return &TransitionError{From: r.status, To: Pending}
	}
	switch {
	case r.cancelRequested:
		return r.stop(OutcomeLost, Cancelled, nil, at)
	case r.attempt < r.maxAttempts:
		return r.stop(OutcomeLost, Pending, nil, at)
	default:
		e := &Error{Code: CodePoisoned, Message: fmt.Sprintf(
			"reclaimed %d times after its lease expired: the attempt cap of %d is reached (--cluster-max-attempts)",
			r.attempt, r.maxAttempts)}
		return r.stop(OutcomeLost, Failed, e, at)
	}
}

// HandBack returns a running run to pending without spending an attempt (drain, history
// outage): the member stopped it on purpose, so the claim's increment is given back. A
// requested cancel ends it cancelled instead.
func (r *Run) HandBack(at time.Time) error {
	if r.status != Running {
		return &TransitionError{From: r.status, To: Pending}
	}
	if r.cancelRequested {
		return r.stop(OutcomeHandedBack, Cancelled, nil, at)
	}
	if err := r.stop(OutcomeHandedBack, Pending, nil, at); err != nil {
		return err
	}
	r.attempt--
	return nil
}

// MarkSharded records the coordinator's plan: running → sharded. The parent has no lease
// of its own from here on (each shard has one), so the owner is cleared; the attempt
// stays open and ends with the parent.
func (r *Run) MarkSharded() error {
	if err := r.transition(Sharded); err != nil {
		return err
	}
	r.owner = ""
	return nil
}

// Promote admits a queued run once its active sibling ended: queued → pending. Only a
// queued run is promoted; the table's other ways into pending (a requeue, a hand-back, a
// retry) have verbs of their own.
func (r *Run) Promote() error {
	if r.status != Queued {
		return &TransitionError{From: r.status, To: Pending}
	}
	return r.transition(Pending)
}

// stop ends the open attempt with outcome and moves the run to status.
func (r *Run) stop(outcome Outcome, status Status, e *Error, at time.Time) error {
	if err := r.transition(status); err != nil {
		return err
	}
	r.end(outcome, nil, at)
	if status.Terminal() {
		r.err = e
		r.finishedAt = at
	}
	return nil
}

// end closes the open attempt, if any, with its error, and releases the owner.
func (r *Run) end(outcome Outcome, e *Error, at time.Time) {
	r.owner = ""
	i := slices.IndexFunc(r.attempts, Attempt.Open)
	if i < 0 {
		return
	}
	r.attempts[i].EndedAt = at
	r.attempts[i].Outcome = outcome
	r.attempts[i].Error = cloneError(e)
}
