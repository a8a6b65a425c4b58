package harness_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

// scripted returns a case whose runs yield samples in turn and whose output holds rows.
func scripted(id string, rows int64, samples []harness.Sample, cleaned *int) harness.Case {
	i := 0
	return harness.Case{
		ID: id, Label: "label " + id,
		Run: func(context.Context, *harness.Env) (harness.Sample, error) {
			s := samples[i%len(samples)]
			i++
			return s, nil
		},
		Count:   func(context.Context, *harness.Env) (int64, error) { return rows, nil },
		Cleanup: func(*harness.Env) error { *cleaned++; return nil },
	}
}

func TestRunSuiteRepeats(t *testing.T) {
	t.Parallel()
	cleaned := 0
	c := scripted("a", 10, []harness.Sample{
		{Wall: 3 * time.Second, PeakRSSKiB: 100},
		{Wall: 1 * time.Second, PeakRSSKiB: 300},
		{Wall: 2 * time.Second, PeakRSSKiB: 200},
	}, &cleaned)
	s := harness.Suite{Name: "s", Cases: []harness.Case{c}}
	res, err := harness.RunSuite(context.Background(), &harness.Env{Rows: 10}, s, s.Cases, 3)
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.NoError(t, res[0].Err)
	require.Equal(t, int64(10), res[0].Rows)
	require.Equal(t, time.Second, res[0].Wall, "fastest run")
	require.Equal(t, int64(300), res[0].PeakRSSKiB, "largest RSS")
	require.InDelta(t, 10.0, res[0].RowsPerSec(), 1e-9)
	require.Equal(t, 1, cleaned)
}

func TestRunSuiteKeepSkipsCleanup(t *testing.T) {
	t.Parallel()
	cleaned := 0
	c := scripted("a", 5, []harness.Sample{{Wall: time.Second}}, &cleaned)
	s := harness.Suite{Name: "s", Cases: []harness.Case{c}}
	_, err := harness.RunSuite(context.Background(), &harness.Env{Rows: 5, Keep: true}, s, s.Cases, 1)
	require.NoError(t, err)
	require.Zero(t, cleaned)
}

func TestRunSuiteFailuresReportNoSpeed(t *testing.T) {
	t.Parallel()
	cleaned := 0
	short := scripted("short", 9, []harness.Sample{{Wall: time.Second, PeakRSSKiB: 1}}, &cleaned)
	broken := tcase("broken", false)
	broken.Run = func(context.Context, *harness.Env) (harness.Sample, error) {
		return harness.Sample{}, errors.New("exit status 1")
	}
	uncountable := scripted("uncountable", 10, []harness.Sample{{Wall: time.Second}}, &cleaned)
	uncountable.Count = func(context.Context, *harness.Env) (int64, error) { return 0, errors.New("no such table") }
	good := scripted("good", 10, []harness.Sample{{Wall: time.Second}}, &cleaned)
	s := harness.Suite{Name: "s", Cases: []harness.Case{short, broken, uncountable, good}}

	res, err := harness.RunSuite(context.Background(), &harness.Env{Rows: 10}, s, s.Cases, 1)
	require.NoError(t, err)
	require.Len(t, res, 4)
	require.ErrorContains(t, res[0].Err, "9 rows, want 10")
	require.ErrorContains(t, res[1].Err, "exit status 1")
	require.ErrorContains(t, res[2].Err, "no such table")
	for _, r := range res[:3] {
		require.Zero(t, r.Wall)
		require.Zero(t, r.Rows)
		require.Zero(t, r.RowsPerSec())
	}
	require.NoError(t, res[3].Err, "a failure does not stop the other cases")
	require.Equal(t, 1, cleaned, "only the measured case is cleaned up")
}

func TestRunSuitePrepareFailureStops(t *testing.T) {
	t.Parallel()
	ran := false
	c := tcase("a", false)
	c.Run = func(context.Context, *harness.Env) (harness.Sample, error) { ran = true; return harness.Sample{}, nil }
	s := harness.Suite{Name: "s", Cases: []harness.Case{c},
		Prepare: func(context.Context, *harness.Env) error { return errors.New("disk full") }}
	_, err := harness.RunSuite(context.Background(), &harness.Env{Rows: 1}, s, s.Cases, 1)
	require.ErrorContains(t, err, "suite s: prepare: disk full")
	require.False(t, ran)
}

func TestRunSuiteCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := demoSuite()
	res, err := harness.RunSuite(ctx, &harness.Env{Rows: 0}, s, s.Cases, 1)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, res)
}
