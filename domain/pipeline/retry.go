package pipeline

import (
	"math"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain/backoff"
	"github.com/sluicehq/sluice/domain/run"
)

// The values of a retry block's absent keys (SPEC §14.5).
const (
	DefaultRetryAttempts   = 3
	DefaultRetryInitial    = 10 * time.Second
	DefaultRetryMax        = 600 * time.Second
	DefaultRetryMultiplier = 2
)

var retryKeys = []string{"max_attempts", "initial_secs", "max_secs", "multiplier", "on"}

// DefaultRetry is a retry block with every key absent.
func DefaultRetry() run.Retry {
	return run.Retry{MaxAttempts: DefaultRetryAttempts, On: run.RetryTransient, Backoff: backoff.Policy{
		Initial: DefaultRetryInitial, Max: DefaultRetryMax, Multiplier: DefaultRetryMultiplier}}
}

// retry reads the top-level retry block into cfg.Retry; absent means no retry.
func (c *checker) retry(n *Node, cfg *Config) {
	if n == nil || n.Kind == KindNull {
		return
	}
	fields, ok := c.mapFields(n, "retry", retryKeys)
	if !ok {
		return
	}
	p := DefaultRetry()
	bad := false
	if v, st := c.value(fields["max_attempts"], "retry.max_attempts", FieldInt); st == valid {
		p.MaxAttempts = int(min(max(v.(int64), math.MinInt32), math.MaxInt32))
	} else if st == invalid {
		bad = true
	}
	secs := func(key string, into *time.Duration) {
		v, st := c.value(fields[key], "retry."+key, FieldNumber)
		switch st {
		case valid:
			f := v.(float64)
			if f <= 0 || f > run.MaxRetryWait.Seconds() {
				c.add("retry."+key, fields[key].Pos, "must be a number of seconds above 0 and at most %d", int(run.MaxRetryWait.Seconds()))
				bad = true
				return
			}
			*into = time.Duration(f * float64(time.Second))
		case invalid:
			bad = true
		}
	}
	secs("initial_secs", &p.Backoff.Initial)
	secs("max_secs", &p.Backoff.Max)
	if v, st := c.value(fields["multiplier"], "retry.multiplier", FieldNumber); st == valid {
		p.Backoff.Multiplier = v.(float64)
	} else if st == invalid {
		bad = true
	}
	if v, st := c.enum(fields["on"], "retry.on", string(run.RetryTransient), string(run.RetryAny)); st == valid {
		p.On = run.RetryOn(v)
	} else if st == invalid {
		bad = true
	}
	if bad {
		return
	}
	if err := p.Validate("retry"); err != nil {
		field, _, _ := strings.Cut(err.Error(), " ")
		c.add(field, n.Pos, "%s", strings.TrimPrefix(err.Error(), field+" "))
		return
	}
	cfg.Retry = &p
}
