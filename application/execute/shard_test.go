package execute_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// planningSource is a source connector that also plans shards.
type planningSource struct {
	*fakeSource
	plan []execute.ShardSlice
	err  error
	n    int
}

func (p *planningSource) PlanShards(_ context.Context, _ execute.ReadRequest, n int) ([]execute.ShardSlice, error) {
	p.n = n
	return p.plan, p.err
}

type planningRegistry struct {
	fakeRegistry
	src execute.SourceConnector
}

func (r *planningRegistry) Source(typ string) (execute.SourceConnector, bool) {
	return r.src, typ == "fake"
}

func TestPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rng := shard.Range{Index: 0, Lo: 1, Hi: 9, Nulls: true}
	good := []execute.ShardSlice{{Index: 0, Count: 1, Range: &rng}}

	src := &planningSource{fakeSource: &fakeSource{}, plan: good}
	e := &execute.Executor{Registry: &planningRegistry{src: src}}
	got, err := e.Plan(ctx, config(false), 8)
	require.NoError(t, err)
	require.Equal(t, good, got)
	require.Equal(t, 8, src.n, "the planner is asked for the configured count")

	plain := &execute.Executor{Registry: &fakeRegistry{src: &fakeSource{}}}
	got, err = plain.Plan(ctx, config(false), 8)
	require.NoError(t, err)
	require.Nil(t, got, "a source that cannot plan runs whole")

	src.err = fmt.Errorf("%w: source.config.shard.key \"x\" is a text column", execute.ErrShardKey)
	_, err = e.Plan(ctx, config(false), 8)
	var f *execute.Failure
	require.True(t, errors.As(err, &f))
	require.Equal(t, run.CodeShardKeyInvalid, f.Code)
	require.ErrorContains(t, err, `shard.key "x"`)

	src.err = errors.New("connection refused")
	_, err = e.Plan(ctx, config(false), 8)
	require.True(t, errors.As(err, &f))
	require.Equal(t, run.CodeConfigError, f.Code)

	src.err, src.plan = nil, []execute.ShardSlice{{Index: 1, Count: 1}}
	_, err = e.Plan(ctx, config(false), 8)
	require.ErrorContains(t, err, "numbered 1 of 1")
}

func TestShardSliceReachesTheSource(t *testing.T) {
	t.Parallel()
	src := &fakeSource{pages: 1, rowsPerPage: 2}
	e := &execute.Executor{Registry: &fakeRegistry{src: src, snk: &fakeSink{}}}
	rng := shard.Range{Index: 2, Lo: 10, Hi: 20}
	sl := &execute.ShardSlice{Index: 2, Count: 4, Range: &rng}
	_, err := e.Run(context.Background(), execute.Job{Config: config(false), Shard: sl})
	require.NoError(t, err)
	require.Equal(t, sl, src.request().Shard)
}

// requestSink records the request it was opened with.
type requestSink struct {
	*fakeSink
	req execute.WriteRequest
}

func (k *requestSink) OpenSink(_ context.Context, req execute.WriteRequest) (execute.Sink, error) {
	k.req = req
	return k.fakeSink, nil
}

type sinkRegistry struct {
	fakeRegistry
	snk execute.SinkConnector
}

func (r *sinkRegistry) Sink(typ string) (execute.SinkConnector, bool) { return r.snk, typ == "fake" }

// A sink that names objects after the run and shard is told both.
func TestRunAndShardReachTheSink(t *testing.T) {
	t.Parallel()
	snk := &requestSink{fakeSink: &fakeSink{}}
	e := &execute.Executor{Registry: &sinkRegistry{fakeRegistry: fakeRegistry{src: &fakeSource{pages: 1, rowsPerPage: 2}}, snk: snk}}
	sl := &execute.ShardSlice{Index: 3, Count: 4}
	_, err := e.Run(context.Background(), execute.Job{Config: config(false), Run: "run-7::3", Shard: sl})
	require.NoError(t, err)
	require.Equal(t, "run-7::3", snk.req.Run)
	require.Equal(t, sl, snk.req.Shard)
}
