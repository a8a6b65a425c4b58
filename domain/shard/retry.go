package shard

import (
	"errors"
	"time"

	"github.com/sluicehq/sluice/domain/run"
)

// Fail ends a running shard's attempt with f under its run's retry policy (nil: none), as
// run.Run.Fail does for a run: back to pending, due after the backoff delay, while the
// policy covers f and attempts remain and the run's cancel was not requested; failed
// otherwise (which fails the run once its siblings end).
func (s *Shard) Fail(f run.Failure, policy *run.Retry, cancelRequested bool, at time.Time, draw float64) (run.Decision, error) {
	if s.status != Running {
		return run.Decision{}, &TransitionError{From: s.status, To: Failed}
	}
	e := f.Error
	if e == nil || !e.Code.Valid() {
		return run.Decision{}, errors.New("a failed attempt needs an error with a run error code")
	}
	if cancelRequested || policy == nil || s.attempt >= policy.MaxAttempts || !policy.Retryable(e.Code, f.Transient) {
		return run.Decision{}, s.Finish(Failed, e, at)
	}
	d := policy.Backoff.Delay(s.attempt, draw)
	d = max(d, min(f.Hint, policy.Backoff.Max))
	if err := s.transition(Pending); err != nil {
		return run.Decision{}, err
	}
	s.owner = ""
	s.err = cloneError(e)
	s.notBefore = at.Add(d)
	return run.Decision{Retry: true, Delay: d}, nil
}

// NotBefore is when a shard waiting for its retry becomes claimable; zero otherwise.
func (s *Shard) NotBefore() time.Time { return s.notBefore }
