package run

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode"

	"github.com/sluicehq/sluice/domain/naming"
)

// MaxIDLen and MaxRunKeyLen bound the identifiers a run carries, so they fit the indexed
// columns of every history dialect.
const (
	MaxIDLen     = 128
	MaxRunKeyLen = 255
)

// Run is one execution of one pipeline config. Its fields are unexported so that every
// change goes through a verb that checks the lifecycle; the store reads a Run through
// Snapshot and rebuilds one through Rehydrate.
type Run struct {
	id              string
	name            string
	pool            string
	tenant          string
	labels          map[string]string
	trigger         TriggerKind
	runKey          string
	status          Status
	attempt         int
	maxAttempts     int
	owner           string
	cancelRequested bool
	createdAt       time.Time
	claimedAt       time.Time
	startedAt       time.Time
	finishedAt      time.Time
	err             *Error
	attempts        []Attempt
	retry           *Retry    // nil: a failure is final
	notBefore       time.Time // a pending run waiting for its retry is not claimed before it
}

// NewParams is what a new run is made of. The pool must already be resolved
// (pool.Resolve); Queued is the admission decision (another run of the pipeline key is
// active and the pipeline is serial).
type NewParams struct {
	ID          string
	Name        string
	Pool        string
	Tenant      string // "" for an untenanted run
	Labels      map[string]string
	TriggerKind TriggerKind
	RunKey      string // "" for none
	MaxAttempts int
	CreatedAt   time.Time
	Queued      bool
	Retry       *Retry // nil: no retry (SPEC §14.5)
}

// New validates p and returns a run in pending (or queued) status. Every problem found is
// reported, each naming the field to change.
func New(p NewParams) (*Run, error) {
	var errs []error
	if err := checkID(p.ID); err != nil {
		errs = append(errs, err)
	}
	if err := naming.Check("name", p.Name); err != nil {
		errs = append(errs, err)
	}
	if err := naming.Check("pool", p.Pool); err != nil {
		errs = append(errs, err)
	}
	if p.Tenant != "" {
		if err := naming.Check("tenant", p.Tenant); err != nil {
			errs = append(errs, err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Labels)) {
		if err := naming.Check("label key", k); err != nil {
			errs = append(errs, err)
		}
	}
	if !p.TriggerKind.Valid() {
		_, err := ParseTriggerKind(string(p.TriggerKind))
		errs = append(errs, err)
	}
	if err := checkRunKey(p.RunKey); err != nil {
		errs = append(errs, err)
	}
	if p.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("max_attempts must be at least 1 (got %d): set --cluster-max-attempts", p.MaxAttempts))
	}
	if p.Retry != nil {
		if err := p.Retry.Validate("retry"); err != nil {
			errs = append(errs, err)
		}
	}
	if p.CreatedAt.IsZero() {
		errs = append(errs, errors.New("created_at must be set"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	r := &Run{
		id:          p.ID,
		name:        p.Name,
		pool:        p.Pool,
		tenant:      p.Tenant,
		labels:      cloneLabels(p.Labels),
		trigger:     p.TriggerKind,
		runKey:      p.RunKey,
		status:      StatusNew,
		maxAttempts: p.MaxAttempts,
		createdAt:   p.CreatedAt,
		retry:       cloneRetry(p.Retry),
	}
	first := Pending
	if p.Queued {
		first = Queued
	}
	if err := r.transition(first); err != nil {
		return nil, err // unreachable: the table allows both; kept so a table edit cannot slip by
	}
	return r, nil
}

func checkID(id string) error {
	if id == "" {
		return errors.New("run id must not be empty")
	}
	if len(id) > MaxIDLen {
		return fmt.Errorf("run id is %d bytes long: at most %d are allowed", len(id), MaxIDLen)
	}
	for _, c := range id {
		if unicode.IsSpace(c) || !unicode.IsPrint(c) {
			return fmt.Errorf("run id %q must not contain spaces or control characters", id)
		}
	}
	return nil
}

func checkRunKey(k string) error {
	if len(k) > MaxRunKeyLen {
		return fmt.Errorf("run_key is %d bytes long: at most %d are allowed", len(k), MaxRunKeyLen)
	}
	for _, c := range k {
		if !unicode.IsPrint(c) {
			return errors.New("run_key must not contain control characters")
		}
	}
	return nil
}

// Snapshot is the full state of a run as the store persists it. It is a plain copy:
// changing it never changes the Run it came from.
type Snapshot struct {
	ID              string
	Name            string
	Pool            string
	Tenant          string
	Labels          map[string]string
	TriggerKind     TriggerKind
	RunKey          string
	Status          Status
	Attempt         int
	MaxAttempts     int
	Owner           string // instance id of the member holding the lease; "" when unowned
	CancelRequested bool
	CreatedAt       time.Time
	ClaimedAt       time.Time // last claim; zero when never claimed
	StartedAt       time.Time // first claim; zero when never claimed
	FinishedAt      time.Time // zero until terminal
	Error           *Error
	Attempts        []Attempt
	Retry           *Retry
	NotBefore       time.Time // zero unless the run waits for a retry
}

// Rehydrate rebuilds a run from what the store read. It is the only way back from the
// history and trusts its input: the store wrote it through the same rules.
func Rehydrate(s Snapshot) *Run {
	return &Run{
		id:              s.ID,
		name:            s.Name,
		pool:            s.Pool,
		tenant:          s.Tenant,
		labels:          cloneLabels(s.Labels),
		trigger:         s.TriggerKind,
		runKey:          s.RunKey,
		status:          s.Status,
		attempt:         s.Attempt,
		maxAttempts:     s.MaxAttempts,
		owner:           s.Owner,
		cancelRequested: s.CancelRequested,
		createdAt:       s.CreatedAt,
		claimedAt:       s.ClaimedAt,
		startedAt:       s.StartedAt,
		finishedAt:      s.FinishedAt,
		err:             cloneError(s.Error),
		attempts:        cloneAttempts(s.Attempts),
		retry:           cloneRetry(s.Retry),
		notBefore:       s.NotBefore,
	}
}

// Snapshot returns a copy of the run's state for the store.
func (r *Run) Snapshot() Snapshot {
	return Snapshot{
		ID:              r.id,
		Name:            r.name,
		Pool:            r.pool,
		Tenant:          r.tenant,
		Labels:          cloneLabels(r.labels),
		TriggerKind:     r.trigger,
		RunKey:          r.runKey,
		Status:          r.status,
		Attempt:         r.attempt,
		MaxAttempts:     r.maxAttempts,
		Owner:           r.owner,
		CancelRequested: r.cancelRequested,
		CreatedAt:       r.createdAt,
		ClaimedAt:       r.claimedAt,
		StartedAt:       r.startedAt,
		FinishedAt:      r.finishedAt,
		Error:           cloneError(r.err),
		Attempts:        cloneAttempts(r.attempts),
		Retry:           cloneRetry(r.retry),
		NotBefore:       r.notBefore,
	}
}

// Getters. Collections are returned as copies so callers cannot change the run.

func (r *Run) ID() string                { return r.id }
func (r *Run) Name() string              { return r.name }
func (r *Run) Pool() string              { return r.pool }
func (r *Run) Tenant() string            { return r.tenant }
func (r *Run) Labels() map[string]string { return cloneLabels(r.labels) }
func (r *Run) TriggerKind() TriggerKind  { return r.trigger }
func (r *Run) RunKey() string            { return r.runKey }
func (r *Run) Status() Status            { return r.status }
func (r *Run) Attempt() int              { return r.attempt }
func (r *Run) MaxAttempts() int          { return r.maxAttempts }
func (r *Run) Owner() string             { return r.owner }
func (r *Run) CancelRequested() bool     { return r.cancelRequested }
func (r *Run) CreatedAt() time.Time      { return r.createdAt }
func (r *Run) ClaimedAt() time.Time      { return r.claimedAt }
func (r *Run) StartedAt() time.Time      { return r.startedAt }
func (r *Run) FinishedAt() time.Time     { return r.finishedAt }
func (r *Run) Error() *Error             { return cloneError(r.err) }
func (r *Run) Attempts() []Attempt       { return cloneAttempts(r.attempts) }
func (r *Run) Retry() *Retry             { return cloneRetry(r.retry) }
func (r *Run) NotBefore() time.Time      { return r.notBefore }

func cloneLabels(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	return maps.Clone(m)
}

func cloneError(e *Error) *Error {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}

func cloneRetry(p *Retry) *Retry {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// cloneAttempts copies attempts deeply: an attempt's error is a pointer.
func cloneAttempts(as []Attempt) []Attempt {
	out := slices.Clone(as)
	for i := range out {
		out[i].Error = cloneError(out[i].Error)
	}
	return out
}
