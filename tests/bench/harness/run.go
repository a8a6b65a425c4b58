package harness

import (
	"context"
	"fmt"
	"time"
)

// Result is one row of the table.
type Result struct {
	ID       string
	Label    string
	Baseline bool
	// Rows is the verified row count of the output.
	Rows int64
	// Wall is the fastest of the repeats; PeakRSSKiB the largest.
	Wall       time.Duration
	PeakRSSKiB int64
	// Err is why the case produced no numbers; its other fields are then zero.
	Err error
}

// RowsPerSec is Rows over the wall time.
func (r Result) RowsPerSec() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Rows) / r.Wall.Seconds()
}

// RunSuite prepares s and runs each of cases repeat times. A failing case becomes a
// Result with Err and the others still run; only a failed Prepare (or a cancelled ctx)
// stops the suite.
func RunSuite(ctx context.Context, env *Env, s Suite, cases []Case, repeat int) ([]Result, error) {
	if s.Prepare != nil {
		if err := s.Prepare(ctx, env); err != nil {
			return nil, fmt.Errorf("suite %s: prepare: %w", s.Name, err)
		}
	}
	results := make([]Result, 0, len(cases))
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		res := runCase(ctx, env, c, max(repeat, 1))
		if res.Err != nil {
			env.Progress("%s: FAILED: %v", c.ID, res.Err)
		} else {
			env.Progress("%s: %d rows in %s, peak RSS %.1f MiB", c.ID, res.Rows, res.Wall.Round(time.Millisecond), mib(res.PeakRSSKiB))
		}
		results = append(results, res)
	}
	return results, ctx.Err()
}

func runCase(ctx context.Context, env *Env, c Case, repeat int) Result {
	res := Result{ID: c.ID, Label: c.Label, Baseline: c.Baseline}
	fail := func(err error) Result {
		return Result{ID: c.ID, Label: c.Label, Baseline: c.Baseline, Err: err}
	}
	for i := range repeat {
		env.Progress("%s: run %d of %d", c.ID, i+1, repeat)
		s, err := c.Run(ctx, env)
		if err != nil {
			return fail(err)
		}
		n, err := c.Count(ctx, env)
		if err != nil {
			return fail(fmt.Errorf("verify output: %w", err))
		}
		if n != env.Rows {
			return fail(fmt.Errorf("verify output: %d rows, want %d", n, env.Rows))
		}
		res.Rows = n
		if i == 0 || s.Wall < res.Wall {
			res.Wall = s.Wall
		}
		res.PeakRSSKiB = max(res.PeakRSSKiB, s.PeakRSSKiB)
		if i == 0 && s.PeakRSSKiB < 0 {
			res.PeakRSSKiB = -1
		}
	}
	if c.Cleanup != nil && !env.Keep {
		if err := c.Cleanup(env); err != nil {
			return fail(err)
		}
	}
	return res
}

func mib(kib int64) float64 { return float64(kib) / 1024 }
