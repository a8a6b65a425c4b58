package retry

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/backoff"
)

// Key is the connector config key holding the block.
const Key = "retry"

// Policy is a parsed `retry: {attempts, initial_secs, max_secs}` block.
type Policy struct {
	Attempts int // total tries of one page, ≥ 1; 1 means no retry
	Backoff  backoff.Policy
	// Sleep waits d or until ctx ends; nil means a real timer. Tests pass a fake clock's.
	Sleep func(ctx context.Context, d time.Duration) error
	// Draw returns the jitter draw in [0, 1); nil means math/rand.
	Draw func() float64
	// OnRetry, when set, is told about each retry before its wait (logs, metrics).
	OnRetry func(try int, wait time.Duration, err error)
}

// Default is the policy of a connector whose config has no `retry` block.
func Default() Policy {
	return Policy{Attempts: 5, Backoff: backoff.Policy{Initial: time.Second, Max: 30 * time.Second, Multiplier: 2}}
}

// Parse reads the block under Key of a connector config, starting from def; errors name the key.
func Parse(c map[string]any, def Policy) (Policy, error) {
	raw, ok := c[Key]
	if !ok || raw == nil {
		return def, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return Policy{}, fmt.Errorf("config key %q must be a map like {attempts: 5, initial_secs: 1, max_secs: 30}, got %T", Key, raw)
	}
	for k := range m {
		switch k {
		case "attempts", "initial_secs", "max_secs":
		default:
			return Policy{}, fmt.Errorf("config key %s.%s is unknown (allowed: attempts, initial_secs, max_secs)", Key, k)
		}
	}
	p := def
	n, err := cfg.Int(m, "attempts", int64(def.Attempts))
	if err != nil {
		return Policy{}, fmt.Errorf("%s: %w", Key, err)
	}
	if n < 1 || n > 100 {
		return Policy{}, fmt.Errorf("config key %s.attempts must be between 1 and 100, got %d", Key, n)
	}
	p.Attempts = int(n)
	for _, f := range []struct {
		key string
		dst *time.Duration
	}{{"initial_secs", &p.Backoff.Initial}, {"max_secs", &p.Backoff.Max}} {
		v, ok, err := cfg.Float(m, f.key)
		if err != nil {
			return Policy{}, fmt.Errorf("%s: %w", Key, err)
		}
		if ok {
			*f.dst = time.Duration(v * float64(time.Second))
		}
	}
	if err := p.Backoff.Validate(); err != nil {
		return Policy{}, fmt.Errorf("config key %s: %w", Key, err)
	}
	return p, nil
}

// Do calls fn until it succeeds, fails with an error not marked transient, the attempts are
// spent or ctx ends. The last error is returned as fn gave it (still marked transient, so a
// run-level retry policy can see it).
func Do(ctx context.Context, p Policy, fn func(ctx context.Context) error) error {
	attempts := max(p.Attempts, 1)
	for try := 1; ; try++ {
		err := fn(ctx)
		if err == nil || !execute.IsTransient(err) || try >= attempts || ctx.Err() != nil {
			return err
		}
		wait := p.Backoff.Delay(try, p.draw())
		if hint, ok := execute.RetryAfter(err); ok {
			wait = max(wait, min(hint, max(p.Backoff.Max, time.Second)))
		}
		if p.OnRetry != nil {
			p.OnRetry(try, wait, err)
		}
		if serr := p.sleep(ctx, wait); serr != nil {
			return err
		}
	}
}

func (p Policy) draw() float64 {
	if p.Draw != nil {
		return p.Draw()
	}
	return rand.Float64()
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// DoWhen is Do for a fn whose errors are not marked yet: an error for which again reports
// true (a rolled-back transaction: a deadlock, a serialization failure, a busy database)
// is marked transient and tried again.
func DoWhen(ctx context.Context, p Policy, again func(error) bool, fn func(ctx context.Context) error) error {
	return Do(ctx, p, func(ctx context.Context) error {
		err := fn(ctx)
		if err != nil && again(err) && !execute.IsTransient(err) {
			return execute.Transient(err)
		}
		return err
	})
}
