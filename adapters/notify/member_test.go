package notify_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// These tests wire a real member to the listener and the PostgreSQL history with a poll
// interval of an hour: whatever happens quickly happened through a notification.

type staticLoader struct{}

func (staticLoader) Load(context.Context, []byte, execute.LoadOptions) (*pipeline.Config, error) {
	return &pipeline.Config{Version: 1, Name: "p", Replication: pipeline.Replication{Type: pipeline.Full},
		Source: pipeline.Connector{Type: "generate"}, Sink: pipeline.Connector{Type: "stdout"}}, nil
}

type runnerFunc func(ctx context.Context, job execute.Job) (execute.Stats, error)

func (f runnerFunc) Run(ctx context.Context, job execute.Job) (execute.Stats, error) {
	return f(ctx, job)
}

func startMember(t *testing.T, f *fixture, id string, r cluster.Runner) *cluster.Member {
	t.Helper()
	return startMemberWith(t, f, id, r, cluster.Events{})
}

// startMemberWith is startMember telling ev of the member's loop steps.
func startMemberWith(t *testing.T, f *fixture, id string, r cluster.Runner, ev cluster.Events) *cluster.Member {
	t.Helper()
	m, err := cluster.New(cluster.Config{InstanceID: id, Listen: id + ":8080", MaxConcurrent: 2,
		LeaseTTL: 6 * time.Second, PollInterval: time.Hour, ShutdownKill: time.Second},
		cluster.Deps{Store: f.s, Loader: staticLoader{}, Runner: r, State: f.s, Notifications: f.l, Events: ev})
	require.NoError(t, err)
	require.NoError(t, m.Start(context.Background()))
	t.Cleanup(m.Stop)
	return m
}

func (f *fixture) status(t *testing.T, id string) string {
	t.Helper()
	r, err := f.s.Get(context.Background(), id)
	require.NoError(t, err)
	return r.Status
}

func TestASubmissionIsClaimedAtOnceThroughNotify(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	firstPass := make(chan struct{})
	var once sync.Once
	startMemberWith(t, f, "m1", runnerFunc(func(context.Context, execute.Job) (execute.Stats, error) {
		return execute.Stats{RowsRead: 1, RowsWritten: 1, Pages: 1}, nil
	}), cluster.Events{ClaimPass: func() { once.Do(func() { close(firstPass) }) }})
	<-firstPass // the claim at start found nothing; the loop now waits an hour

	r := newRun("p")
	_, err := f.s.Create(context.Background(), r, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.status(t, r.ID) == "completed" }, waitFor, tick)
}

func TestACancelFromAnotherMemberStopsTheRunAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	started := make(chan struct{}, 1)
	startMember(t, f, "owner", runnerFunc(func(ctx context.Context, _ execute.Job) (execute.Stats, error) {
		started <- struct{}{}
		<-ctx.Done()
		return execute.Stats{RowsWritten: 3, Pages: 1}, ctx.Err()
	}))
	r := newRun("p")
	_, err := f.s.Create(context.Background(), r, nil)
	require.NoError(t, err)
	select {
	case <-started:
	case <-time.After(waitFor):
		t.Fatal("the run did not start")
	}
	// What a peer's cancel does: the flag in the history plus its notification.
	_, err = f.s.RequestCancel(context.Background(), r.ID)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.status(t, r.ID) == "cancelled" }, waitFor, tick)
}
