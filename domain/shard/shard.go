package shard

import (
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/domain/run"
)

// Shard is one slice of a sharded run, executed as its own unit with its own lease and
// attempts. It inherits the parent's pool. A cancel of the parent reaches a shard through
// the parent's flag: the caller cancels pending shards with Cancel and signals running ones.
type Shard struct {
	runID       string
	index       int
	pool        string
	rng         Range
	status      Status
	attempt     int
	maxAttempts int
	owner       string
	claimedAt   time.Time
	finishedAt  time.Time
	err         *run.Error
	notBefore   time.Time // a pending shard waiting for its retry is not claimed before it
}

// NewParams is what the coordinator plans for one shard.
type NewParams struct {
	RunID       string
	Index       int
	Pool        string // the parent's pool
	Range       Range  // key-range strategies; for hash buckets only Index matters
	MaxAttempts int
}

// New returns a pending shard.
func New(p NewParams) (*Shard, error) {
	var errs []error
	if p.RunID == "" {
		errs = append(errs, errors.New("shard needs the id of its parent run"))
	}
	if p.Index < 0 || p.Index >= MaxCount {
		errs = append(errs, fmt.Errorf("shard index %d is outside 0..%d", p.Index, MaxCount-1))
	}
	if p.Pool == "" {
		errs = append(errs, errors.New("shard needs its parent's pool"))
	}
	if p.Range.Lo > p.Range.Hi {
		errs = append(errs, fmt.Errorf("shard range %d..%d is empty", p.Range.Lo, p.Range.Hi))
	}
	if p.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("max_attempts must be at least 1 (got %d): set --cluster-max-attempts", p.MaxAttempts))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Shard{runID: p.RunID, index: p.Index, pool: p.Pool, rng: p.Range, status: Pending, maxAttempts: p.MaxAttempts}, nil
}

// Snapshot is the full state of a shard as the store persists it.
type Snapshot struct {
	RunID       string
	Index       int
	Pool        string
	Range       Range
	Status      Status
	Attempt     int
	MaxAttempts int
	Owner       string
	ClaimedAt   time.Time
	FinishedAt  time.Time
	Error       *run.Error
	NotBefore   time.Time
}

// Rehydrate rebuilds a shard from what the store read.
func Rehydrate(s Snapshot) *Shard {
	return &Shard{
		runID: s.RunID, index: s.Index, pool: s.Pool, rng: s.Range, status: s.Status,
		attempt: s.Attempt, maxAttempts: s.MaxAttempts, owner: s.Owner,
		claimedAt: s.ClaimedAt, finishedAt: s.FinishedAt, err: cloneError(s.Error),
		notBefore: s.NotBefore,
	}
}

// Snapshot returns a copy of the shard's state for the store.
func (s *Shard) Snapshot() Snapshot {
	return Snapshot{
		RunID: s.runID, Index: s.index, Pool: s.pool, Range: s.rng, Status: s.status,
		Attempt: s.attempt, MaxAttempts: s.maxAttempts, Owner: s.owner,
		ClaimedAt: s.claimedAt, FinishedAt: s.finishedAt, Error: cloneError(s.err),
		NotBefore: s.notBefore,
	}
}

func (s *Shard) RunID() string         { return s.runID }
func (s *Shard) Index() int            { return s.index }
func (s *Shard) Pool() string          { return s.pool }
func (s *Shard) Range() Range          { return s.rng }
func (s *Shard) Status() Status        { return s.status }
func (s *Shard) Attempt() int          { return s.attempt }
func (s *Shard) MaxAttempts() int      { return s.maxAttempts }
func (s *Shard) Owner() string         { return s.owner }
func (s *Shard) ClaimedAt() time.Time  { return s.claimedAt }
func (s *Shard) FinishedAt() time.Time { return s.finishedAt }
func (s *Shard) Error() *run.Error     { return cloneError(s.err) }

// transition is the only place a shard's status changes.
func (s *Shard) transition(to Status) error {
	if !CanTransition(s.status, to) {
		return &TransitionError{From: s.status, To: to}
	}
	s.status = to
	return nil
}

// Claim gives the shard to owner and spends an attempt.
func (s *Shard) Claim(owner string, at time.Time) error {
	if owner == "" {
		return errors.New("claim needs the instance id of the claiming member")
	}
	if s.status == Pending && at.Before(s.notBefore) {
		return fmt.Errorf("shard %d waits for its retry until %s: %w", s.index, s.notBefore.UTC().Format(time.RFC3339), run.ErrConflict)
	}
	if err := s.transition(Running); err != nil {
		return err
	}
	s.notBefore = time.Time{}
	s.attempt++
	s.owner = owner
	s.claimedAt = at
	return nil
}

// Finish ends a running shard. A failed shard needs an error; a completed one has none.
func (s *Shard) Finish(status Status, e *run.Error, at time.Time) error {
	switch {
	case !status.Terminal():
		return fmt.Errorf("finish needs a terminal status (completed, failed or cancelled), got %q", status)
	case status == Completed && e != nil:
		return fmt.Errorf("a completed shard carries no error (got %s)", e.Code)
	case status == Failed && e == nil:
		return errors.New("a failed shard needs an error code")
	case e != nil && !e.Code.Valid():
		return fmt.Errorf("error code %q is not a run error code", e.Code)
	case s.status != Running:
		return &TransitionError{From: s.status, To: status}
	}
	return s.end(status, e, at)
}

// Cancel ends a pending shard at once, or a running one after it flushed.
func (s *Shard) Cancel(at time.Time) error { return s.end(Cancelled, nil, at) }

// Requeue handles a running shard whose lease expired: its run's requested cancel ends it
// cancelled; below the attempt cap it returns to pending; at the cap it fails (poisoned),
// which fails the parent once its siblings end.
func (s *Shard) Requeue(cancelRequested bool, at time.Time) error {
	if s.status != Running {
		return &TransitionError{From: s.status, To: Pending}
	}
	if cancelRequested {
		return s.Cancel(at)
	}
	if s.attempt < s.maxAttempts {
		s.owner = ""
		return s.transition(Pending)
	}
	return s.end(Failed, &run.Error{Code: run.CodePoisoned, Message: fmt.Sprintf(
		"shard %d reclaimed %d times after its lease expired: the attempt cap of %d is reached (--cluster-max-attempts)",
		s.index, s.attempt, s.maxAttempts)}, at)
}

// HandBack returns a running shard to pending without spending an attempt (drain,
// outage) — or ends it cancelled when its run's cancel was requested.
func (s *Shard) HandBack(cancelRequested bool, at time.Time) error {
	if s.status != Running {
		return &TransitionError{From: s.status, To: Pending}
	}
	if cancelRequested {
		return s.Cancel(at)
	}
	if err := s.transition(Pending); err != nil {
		return err
	}
	s.owner = ""
	s.attempt--
	return nil
}

func (s *Shard) end(status Status, e *run.Error, at time.Time) error {
	if err := s.transition(status); err != nil {
		return err
	}
	s.owner = ""
	s.err = cloneError(e)
	s.finishedAt = at
	return nil
}

func cloneError(e *run.Error) *run.Error {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}
