package runs

import (
	"time"

	"github.com/sluicehq/sluice/domain/backoff"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// Retry is a run's retry policy as requests, the history and every transport write it
// (SPEC §14.5). In a request, an absent (zero) key takes the config block's default.
type Retry struct {
	MaxAttempts int     `json:"max_attempts" jsonschema:"attempts in all, the first included"`
	InitialSecs float64 `json:"initial_secs" jsonschema:"the wait before the first retry, in seconds (the upper bound of its jitter)"`
	MaxSecs     float64 `json:"max_secs" jsonschema:"the longest wait between attempts, in seconds"`
	Multiplier  float64 `json:"multiplier" jsonschema:"how much each wait grows over the one before"`
	On          string  `json:"on" jsonschema:"which failures are retried: transient (marked so by the connector) or any (all but config errors, refusals and timeouts)"`
}

// Policy is the domain policy r describes, its absent keys defaulted; the error names the
// field to change.
func (r Retry) Policy() (*run.Retry, error) {
	p := pipeline.DefaultRetry()
	if r.MaxAttempts != 0 {
		p.MaxAttempts = r.MaxAttempts
	}
	if r.InitialSecs != 0 {
		p.Backoff.Initial = secs(r.InitialSecs)
	}
	if r.MaxSecs != 0 {
		p.Backoff.Max = secs(r.MaxSecs)
	}
	if r.Multiplier != 0 {
		p.Backoff.Multiplier = r.Multiplier
	}
	if r.On != "" {
		p.On = run.RetryOn(r.On)
	}
	if err := p.Validate("retry"); err != nil {
		return nil, err
	}
	return &p, nil
}

// RetryOf shows p; nil stays nil.
func RetryOf(p *run.Retry) *Retry {
	if p == nil {
		return nil
	}
	m := p.Backoff.Multiplier
	if m == 0 {
		m = 2
	}
	return &Retry{MaxAttempts: p.MaxAttempts, InitialSecs: p.Backoff.Initial.Seconds(),
		MaxSecs: p.Backoff.Max.Seconds(), Multiplier: m, On: string(p.On)}
}

// PolicyOf reads a stored policy back without defaults: the history holds only complete,
// validated ones. Nil stays nil.
func (r *Retry) PolicyOf() *run.Retry {
	if r == nil {
		return nil
	}
	return &run.Retry{MaxAttempts: r.MaxAttempts, On: run.RetryOn(r.On), Backoff: backoff.Policy{
		Initial: secs(r.InitialSecs), Max: secs(r.MaxSecs), Multiplier: r.Multiplier}}
}

// secs converts seconds, clamped past the longest wait allowed so that a huge value is
// refused by Validate instead of overflowing.
func secs(f float64) time.Duration {
	return time.Duration(min(f, 2*run.MaxRetryWait.Seconds()) * float64(time.Second))
}
