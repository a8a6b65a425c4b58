package run

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sluicehq/sluice/domain/backoff"
)

// RetryOn says which failures a retry policy retries (SPEC §14.5).
type RetryOn string

// The retry scopes. Transient retries only failures a connector marked transient (a
// dropped connection, a 429/5xx, a deadlock); Any retries every failure except those that
// would fail the same way again (see Retryable).
const (
	RetryTransient RetryOn = "transient"
	RetryAny       RetryOn = "any"
)

// Limits of a retry policy: far above any sensible use, low enough that a typo cannot
// keep a run cycling for a year.
const (
	MaxRetryAttempts = 100
	MaxRetryWait     = 24 * time.Hour
)

// Retry is a run's retry policy: a failure it covers sends the run back to pending, to be
// claimed again once the backoff delay has passed, until MaxAttempts attempts were made.
type Retry struct {
	MaxAttempts int // attempts in all, the first included; ≥ 2 to retry at all
	Backoff     backoff.Policy
	On          RetryOn
}

// Validate names the first field of the retry block to change; path prefixes the names
// (e.g. "retry").
func (p Retry) Validate(path string) error {
	field := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch {
	case p.MaxAttempts < 1 || p.MaxAttempts > MaxRetryAttempts:
		return fmt.Errorf("%s must be between 1 and %d (attempts in all, the first included), got %d",
			field("max_attempts"), MaxRetryAttempts, p.MaxAttempts)
	case p.On != RetryTransient && p.On != RetryAny:
		return fmt.Errorf("%s must be %s or %s, not %q", field("on"), RetryTransient, RetryAny, p.On)
	case p.Backoff.Max > MaxRetryWait:
		return fmt.Errorf("%s must be at most %d (one day), got %g", field("max_secs"),
			int(MaxRetryWait/time.Second), p.Backoff.Max.Seconds())
	}
	if err := p.Backoff.Validate(); err != nil {
		if path == "" {
			return err
		}
		return fmt.Errorf("%s.%w", path, err)
	}
	return nil
}

// notRetried are the codes no policy retries: the config, the vault or a refusal would
// fail the same way again; a timeout already used the run's time; the others are decided
// by the server, not by an attempt (poisoned, pool_unavailable, the shard outcomes).
var notRetried = []ErrorCode{
	CodeConfigError, CodeVaultKeyMissing, CodeVaultTampered, CodeTimeout, CodePoisoned,
	CodePoolUnavailable, CodeShardFailed, CodeShardKeyInvalid,
	CodePathRefused, CodeHostRefused, CodeHistoryRefused,
}

// Retryable reports whether the policy covers a failure with code; transient says the
// connector marked it transient.
func (p Retry) Retryable(code ErrorCode, transient bool) bool {
	if slices.Contains(notRetried, code) {
		return false
	}
	return p.On == RetryAny || transient
}

// Failure is how an attempt failed, as the executing member saw it.
type Failure struct {
	Error     *Error
	Transient bool          // the connector marked the cause transient
	Hint      time.Duration // the server's own Retry-After; 0 when it gave none
}

// Decision is what Fail decided: Retry with the wait before the next claim, or the end.
type Decision struct {
	Retry bool
	Delay time.Duration
}

// Fail ends a running run's attempt with f. When the run's retry policy covers f and
// attempts remain, the run goes back to pending, due after the backoff delay of this
// attempt (draw ∈ [0, 1) is the jitter; a longer server hint wins); otherwise it ends
// failed. A run whose cancel was requested is never retried: it was to stop anyway.
func (r *Run) Fail(f Failure, at time.Time, draw float64) (Decision, error) {
	if r.status != Running {
		return Decision{}, &TransitionError{From: r.status, To: Failed}
	}
	e := f.Error
	if e == nil || !e.Code.Valid() {
		return Decision{}, errors.New("a failed attempt needs an error with a run error code")
	}
	if r.cancelRequested || r.retry == nil || r.attempt >= r.retry.MaxAttempts ||
		!r.retry.Retryable(e.Code, f.Transient) {
		return Decision{}, r.Finish(Failed, e, at)
	}
	d := r.retry.Backoff.Delay(r.attempt, draw)
	d = max(d, min(f.Hint, r.retry.Backoff.Max))
	if err := r.transition(Pending); err != nil {
		return Decision{}, err
	}
	r.end(OutcomeFailed, e, at)
	r.err = cloneError(e)
	r.notBefore = at.Add(d)
	return Decision{Retry: true, Delay: d}, nil
}
