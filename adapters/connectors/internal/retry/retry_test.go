package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
)

func TestDoRetriesTransientOnly(t *testing.T) {
	var waits []time.Duration
	p, err := retry.Parse(map[string]any{"retry": map[string]any{"attempts": 3, "initial_secs": 1, "max_secs": 4}}, retry.Default())
	if err != nil {
		t.Fatal(err)
	}
	p.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	p.Draw = func() float64 { return 0 }

	calls := 0
	err = retry.Do(context.Background(), p, func(context.Context) error {
		calls++
		return execute.Transient(errors.New("503"))
	})
	if calls != 3 || !execute.IsTransient(err) {
		t.Fatalf("calls=%d err=%v, want 3 calls and the transient error", calls, err)
	}
	if len(waits) != 2 || waits[0] != 500*time.Millisecond || waits[1] != time.Second {
		t.Fatalf("waits = %v, want [500ms 1s]", waits)
	}

	calls = 0
	perm := errors.New("syntax error")
	if err := retry.Do(context.Background(), p, func(context.Context) error { calls++; return perm }); !errors.Is(err, perm) || calls != 1 {
		t.Fatalf("permanent error tried %d times (%v)", calls, err)
	}
}

func TestDoHonoursRetryAfter(t *testing.T) {
	p := retry.Default()
	var got time.Duration
	p.Sleep = func(_ context.Context, d time.Duration) error { got = d; return nil }
	calls := 0
	_ = retry.Do(context.Background(), p, func(context.Context) error {
		calls++
		if calls == 1 {
			return execute.TransientAfter(errors.New("429"), 7*time.Second)
		}
		return nil
	})
	if got != 7*time.Second {
		t.Fatalf("waited %s, want the 7s Retry-After", got)
	}
}

func TestParseNamesTheKey(t *testing.T) {
	for _, c := range []map[string]any{
		{"retry": "yes"},
		{"retry": map[string]any{"attempts": 0}},
		{"retry": map[string]any{"initial_secs": 10, "max_secs": 1}},
		{"retry": map[string]any{"tries": 2}},
	} {
		if _, err := retry.Parse(c, retry.Default()); err == nil {
			t.Fatalf("%v accepted", c)
		}
	}
}

func TestDoWhenMarksWhatMayBeTriedAgain(t *testing.T) {
	p := retry.Default()
	p.Sleep = func(context.Context, time.Duration) error { return nil }
	deadlock, syntax := errors.New("deadlock"), errors.New("syntax")
	calls := 0
	err := retry.DoWhen(context.Background(), p, func(err error) bool { return errors.Is(err, deadlock) }, func(context.Context) error {
		calls++
		if calls < 3 {
			return deadlock
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("calls=%d err=%v, want success on the third try", calls, err)
	}
	calls = 0
	err = retry.DoWhen(context.Background(), p, func(err error) bool { return errors.Is(err, deadlock) }, func(context.Context) error {
		calls++
		return syntax
	})
	if !errors.Is(err, syntax) || calls != 1 || execute.IsTransient(err) {
		t.Fatalf("calls=%d err=%v, want one try and the error unmarked", calls, err)
	}
}
