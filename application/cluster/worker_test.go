package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// finished waits until run id has ended and returns it as the history keeps it.
func finished(t *testing.T, store *history, id string) *runs.Record {
	t.Helper()
	return store.ended(t, id)
}

func TestConfigErrorFailsTheRunWithConfigError(t *testing.T) {
	t.Parallel()
	c := claimed("r1")
	c.Config = "bad"
	store := newHistory(t)
	store.add(c)
	runner := &fakeRunner{fn: succeed(1)}
	start(t, store, runner, nil)

	o := finished(t, store, "r1")
	require.Equal(t, string(run.Failed), o.Status)
	require.Equal(t, string(run.CodeConfigError), o.ErrorCode)
	require.Contains(t, o.ErrorMessage, "${env:PG_URL}")
	require.Contains(t, o.ErrorMessage, "pipeline.source.config.connection_url")
	require.Zero(t, runner.started.Load(), "a config that does not load never runs")
}

func TestLoadUsesTheServeOptions(t *testing.T) {
	t.Parallel()
	zone, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	c := claimed("r1")
	store := newHistory(t)
	store.add(c)
	h := start(t, store, &fakeRunner{fn: succeed(1)}, func(cfg *cluster.Config, _ *cluster.Deps) {
		cfg.AllowFileDirs = []string{"/srv/files"}
		cfg.Zone = zone
	})
	finished(t, store, "r1")
	h.loader.mu.Lock()
	defer h.loader.mu.Unlock()
	require.Len(t, h.loader.opts, 1)
	got := h.loader.opts[0]
	require.True(t, got.Network, "a stored config arrived over the network")
	require.Equal(t, []string{"/srv/files"}, got.AllowFileDirs)
	require.True(t, got.Logical.Equal(c.LogicalAt), "every attempt sees the run's logical instant")
	require.Equal(t, zone, got.Zone)
}

func TestTimeoutCountsAcrossAttempts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		timeoutSecs int
		elapsedMS   int64
		wantTimeout time.Duration
		wantFail    bool
	}{
		{"no timeout", 0, 5000, 0, false},
		{"first attempt", 10, 0, 10 * time.Second, false},
		{"rest after an earlier attempt", 10, 4000, 6 * time.Second, false},
		{"used up exactly", 10, 10000, 0, true},
		{"overrun", 10, 12000, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := claimed("r1")
			c.TimeoutSecs, c.ElapsedMS = tc.timeoutSecs, tc.elapsedMS
			store := newHistory(t)
			store.add(c)
			runner := &fakeRunner{fn: succeed(1)}
			start(t, store, runner, nil)
			o := finished(t, store, "r1")
			if tc.wantFail {
				require.Equal(t, string(run.Failed), o.Status)
				require.Equal(t, string(run.CodeTimeout), o.ErrorCode)
				require.Contains(t, o.ErrorMessage, "timeout_secs 10")
				require.Zero(t, runner.started.Load())
				return
			}
			require.Equal(t, string(run.Completed), o.Status)
			require.Equal(t, tc.wantTimeout, runner.job(0).Timeout)
		})
	}
}

func TestRunnerPanicFailsWithPipelineError(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"), claimed("r2"))
	calls := 0
	runner := &fakeRunner{}
	runner.fn = func(context.Context, execute.Job) (execute.Stats, error) {
		runner.mu.Lock()
		calls++
		first := calls == 1
		runner.mu.Unlock()
		if first {
			panic("index out of range")
		}
		return execute.Stats{RowsWritten: 1}, nil
	}
	start(t, store, runner, func(c *cluster.Config, _ *cluster.Deps) { c.MaxConcurrent = 1 })

	o1, o2 := finished(t, store, "r1"), finished(t, store, "r2")
	require.Equal(t, string(run.Failed), o1.Status)
	require.Equal(t, string(run.CodePipelineError), o1.ErrorCode)
	require.Contains(t, o1.ErrorMessage, "index out of range")
	require.Equal(t, string(run.Completed), o2.Status, "the member survives and runs the next one")
}

func TestFailureKeepsItsCodeAndIsRedacted(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	runner := &fakeRunner{fn: func(context.Context, execute.Job) (execute.Stats, error) {
		return execute.Stats{RowsWritten: 2}, &execute.Failure{Code: run.CodePipelineError, Connector: "postgres",
			Role: execute.RoleSink, Page: 3, Err: errors.New("password authentication failed: hunter2")}
	}}
	start(t, store, runner, func(_ *cluster.Config, d *cluster.Deps) { d.Redactor.Register("hunter2") })

	o := finished(t, store, "r1")
	require.Equal(t, string(run.Failed), o.Status)
	require.Equal(t, string(run.CodePipelineError), o.ErrorCode)
	require.Contains(t, o.ErrorMessage, "sink postgres: page 3")
	require.NotContains(t, o.ErrorMessage, "hunter2")
	require.EqualValues(t, 2, o.Stats.RowsWritten, "confirmed rows are reported after a failure")
}

func TestTimeoutFailureFromTheRunner(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	start(t, store, &fakeRunner{fn: func(context.Context, execute.Job) (execute.Stats, error) {
		return execute.Stats{Pages: 2}, &execute.Failure{Code: run.CodeTimeout, Err: context.DeadlineExceeded}
	}}, nil)
	o := finished(t, store, "r1")
	require.Equal(t, string(run.CodeTimeout), o.ErrorCode)
}

func TestProgressIsThrottledToOncePerSecond(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	var clock *fakeClock
	runner := &fakeRunner{fn: func(_ context.Context, job execute.Job) (execute.Stats, error) {
		for i := int64(1); i <= 9; i++ {
			if i == 4 || i == 7 {
				clock.Advance(time.Second)
			}
			job.Progress(execute.Stats{RowsWritten: i * 10, Pages: i})
		}
		return execute.Stats{RowsWritten: 90, Pages: 9}, nil
	}}
	start(t, store, runner, func(_ *cluster.Config, d *cluster.Deps) {
		clock = d.Clock.(*fakeClock)
	})
	o := finished(t, store, "r1")
	require.EqualValues(t, 90, o.Stats.RowsWritten)
	store.mu.Lock()
	defer store.mu.Unlock()
	got := store.progress["r1"]
	// The first second's pages write nothing (a run ending in it gets its counters
	// from Finish); then one write per second.
	require.Len(t, got, 2, "nine pages over three seconds make two progress writes")
	require.EqualValues(t, 40, got[0].RowsWritten)
	require.EqualValues(t, 70, got[1].RowsWritten)
}

func TestLeaseLostOnProgressStopsTheRunWithoutFinish(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	var clock *fakeClock
	stopped := make(chan struct{})
	h := start(t, store, &fakeRunner{fn: func(ctx context.Context, job execute.Job) (execute.Stats, error) {
		defer close(stopped)
		store.steal(job.Run)       // a peer took the run before its first progress write
		clock.Advance(time.Second) // past the first progress interval: this page is written
		return untilCancelled(5)(ctx, job)
	}}, func(_ *cluster.Config, d *cluster.Deps) { clock = d.Clock.(*fakeClock) })

	receive(t, stopped, "the refused progress write stops the run")
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)
	require.Zero(t, store.finishCalls.Load()+store.handBackCalls.Load(),
		"a run whose lease is lost is neither finished nor handed back")
	rec := store.get("r1")
	require.Equal(t, peerOwner.InstanceID, rec.Owner, "the run stays the peer's")
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	require.Empty(t, h.metrics.finished)
}

func TestLeaseLostAtFinishIsDiscarded(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"), claimed("r2"))
	h := start(t, store, &fakeRunner{fn: func(ctx context.Context, job execute.Job) (execute.Stats, error) {
		if job.Run == "r1" {
			store.steal("r1") // a peer took it while it ran
		}
		return succeed(1)(ctx, job)
	}}, func(c *cluster.Config, _ *cluster.Deps) { c.MaxConcurrent = 1 })

	require.Equal(t, string(run.Completed), finished(t, store, "r2").Status)
	require.Eventually(t, func() bool { return h.member.InFlight() == 0 }, waitFor, tick)
	_, ok := store.outcome("r1")
	require.False(t, ok)
	rec := store.get("r1")
	require.Equal(t, "running", rec.Status, "the member's finish was refused")
	require.Equal(t, peerOwner.InstanceID, rec.Owner)
}

func TestStateKeyAndStore(t *testing.T) {
	t.Parallel()
	other := memState{}
	cases := []struct {
		name      string
		tenant    string
		state     pipeline.State
		incr      bool
		openState bool
		wantKey   string
		wantStore bool
		wantCode  run.ErrorCode
	}{
		{name: "full read: default key, no store", tenant: "acme", wantKey: "acme/orders"},
		{name: "untenanted", wantKey: "_/orders"},
		{name: "incremental: history store", tenant: "acme", incr: true, wantKey: "acme/orders", wantStore: true},
		{name: "state.key overrides", tenant: "acme", incr: true, state: pipeline.State{Key: "custom"},
			wantKey: "custom", wantStore: true},
		{name: "postgres state without an opener is refused", tenant: "acme", incr: true,
			state: pipeline.State{Type: pipeline.StatePostgres}, wantCode: run.CodeConfigError},
		{name: "postgres state with an opener", tenant: "acme", incr: true, openState: true,
			state: pipeline.State{Type: pipeline.StatePostgres}, wantKey: "acme/orders", wantStore: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := claimed("r1")
			c.Tenant = tc.tenant
			store := newHistory(t)
			store.add(c)
			runner := &fakeRunner{fn: succeed(1)}
			start(t, store, runner, func(_ *cluster.Config, d *cluster.Deps) {
				d.Loader = &fakeLoader{cfg: func(string) (*pipeline.Config, error) {
					cfg := &pipeline.Config{Name: "ignored-the-run-name-wins", State: tc.state}
					if tc.incr {
						cfg.Replication = pipeline.Replication{Type: pipeline.Incremental, Cursor: "id"}
					}
					return cfg, nil
				}}
				if tc.openState {
					d.OpenState = func(context.Context, pipeline.State) (execute.StateStore, error) { return other, nil }
				}
			})
			o := finished(t, store, "r1")
			if tc.wantCode != "" {
				require.Equal(t, string(tc.wantCode), o.ErrorCode)
				require.Contains(t, o.ErrorMessage, "state.type")
				return
			}
			job := runner.job(0)
			require.Equal(t, tc.wantKey, job.StateKey)
			require.Equal(t, tc.wantStore, job.State != nil)
		})
	}
}

// A short run's lines ride in its Finish: one transaction at the end, not two.
func TestAShortRunsLinesAreWrittenByItsFinish(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	start(t, store, &fakeRunner{fn: succeed(1)}, func(*cluster.Config, *cluster.Deps) {})
	var o cluster.Outcome
	store.until(t, func() (ok bool) { o, ok = store.outcome("r1"); return ok }, "r1 finished")
	require.NotEmpty(t, o.Logs)
	require.Equal(t, "run started", o.Logs[0].Message)
	stored := store.logs("r1")
	require.Len(t, stored, len(o.Logs), "the history keeps what the finish carried")
	require.Equal(t, "run started", stored[0].Message)
	store.mu.Lock()
	defer store.mu.Unlock()
	require.NotContains(t, store.logWrites, "r1", "no separate log write")
}

func TestLogsArePersistedRedactedBeforeTheRunEnds(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	runner := &fakeRunner{fn: func(_ context.Context, job execute.Job) (execute.Stats, error) {
		job.Log.Debug("noisy detail")
		job.Log.Info("connecting with password hunter2", "dsn", "postgres://u:hunter2@db/x", "page", 1)
		job.Log.WithGroup("sink").Warn("slow", "err", errors.New("token hunter2 rejected"))
		return execute.Stats{}, nil
	}}
	start(t, store, runner, func(_ *cluster.Config, d *cluster.Deps) { d.Redactor.Register("hunter2") })

	finished(t, store, "r1")
	lines := store.logs("r1")
	var all strings.Builder
	for _, l := range lines {
		all.WriteString(l.Message)
		for k, v := range l.Attrs {
			all.WriteString(" " + k + "=")
			if s, ok := v.(string); ok {
				all.WriteString(s)
			}
		}
		all.WriteString("\n")
		require.Equal(t, "r1", l.Attrs["run_id"])
		require.Equal(t, "m1", l.Attrs["instance_id"])
		require.NotEqual(t, "DEBUG", l.Level)
	}
	text := all.String()
	require.NotContains(t, text, "hunter2")
	require.NotContains(t, text, "noisy detail")
	require.Contains(t, text, "connecting with password")
	require.Contains(t, text, "sink.err=")
}

// SPEC §14.1: a failed run's stored message passes through Withhold, so the row data a
// database quotes back never reaches the run resource.
func TestFailedRunMessageIsWithheld(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	store.add(claimed("r1"))
	runner := &fakeRunner{fn: func(context.Context, execute.Job) (execute.Stats, error) {
		return execute.Stats{}, &execute.Failure{Code: run.CodePipelineError, Role: execute.RoleSink, Connector: "postgres",
			Page: 1, Err: errors.New("duplicate key; Key (id)=(row-secret) already exists.")}
	}}
	start(t, store, runner, func(_ *cluster.Config, d *cluster.Deps) {
		d.Withhold = func(s string) string { return strings.ReplaceAll(s, "row-secret", "…") }
	})
	o := finished(t, store, "r1")
	require.Equal(t, string(run.Failed), o.Status)
	require.Equal(t, "sink postgres: page 1: duplicate key; Key (id)=(…) already exists.", o.ErrorMessage)
}
