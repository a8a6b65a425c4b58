package connector

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// rowsSource is the executor-level cases' source: the suite's Data rows from..to in
// pages of batch, narrowed to a shard (id modulo its count) when it is given one.
type rowsSource struct{}

const rowsType = "contract-rows"

func (rowsSource) Spec() pipeline.Spec {
	return pipeline.Spec{Type: rowsType, Roles: pipeline.RoleSource}
}

func (rowsSource) OpenSource(_ context.Context, req execute.ReadRequest) (execute.Source, error) {
	from, to := req.Config["from"].(int64), req.Config["to"].(int64)
	all := Data(int(to))
	d := Dataset{Columns: all.Columns}
	for _, r := range all.Rows[from-1:] {
		if req.Shard == nil || int(r[0].(int64))%req.Shard.Count == req.Shard.Index {
			d.Rows = append(d.Rows, r)
		}
	}
	return &rowsReader{pages: pages(d, batch)}, nil
}

type rowsReader struct{ pages []*execute.Page }

func (r *rowsReader) Next(context.Context) (*execute.Page, error) {
	if len(r.pages) == 0 {
		return nil, io.EOF
	}
	p := r.pages[0]
	r.pages = r.pages[1:]
	return p, nil
}

func (r *rowsReader) Close() error { return nil }

// registry serves rowsSource and the sink under test.
type registry struct {
	spec pipeline.Spec
	sink execute.SinkConnector
}

func (r registry) Spec(typ string) (pipeline.Spec, bool) {
	switch typ {
	case rowsType:
		return rowsSource{}.Spec(), true
	case r.spec.Type:
		return r.spec, true
	}
	return pipeline.Spec{}, false
}

func (r registry) Types(pipeline.Role) []string { return []string{rowsType, r.spec.Type} }

func (r registry) Source(typ string) (execute.SourceConnector, bool) {
	return rowsSource{}, typ == rowsType
}

func (r registry) Sink(typ string) (execute.SinkConnector, bool) { return r.sink, typ == r.spec.Type }

// runner executes jobs of rows from..to into one prepared sink.
type runner struct {
	h  Harness
	sc SinkCase
	ex *execute.Executor
}

func newRunner(h Harness, sc SinkCase) runner {
	return runner{h: h, sc: sc, ex: &execute.Executor{Registry: registry{spec: h.Spec, sink: sc.Sink}}}
}

// job is a run of rows from..to; key "" delivers at least once.
func (r runner) job(from, to int64, key, run string, shard *execute.ShardSlice) execute.Job {
	cfg := &pipeline.Config{
		Version: 1, Name: "contract", ShardCount: 1, Delivery: pipeline.AtLeastOnce,
		Replication: pipeline.Replication{Type: pipeline.Full},
		Source:      pipeline.Connector{Type: rowsType, Config: map[string]any{"from": from, "to": to}},
		Sink:        pipeline.Connector{Type: r.h.Spec.Type, Config: clone(r.sc.Config)},
	}
	if key != "" {
		cfg.Delivery = pipeline.ExactlyOnce
	}
	return execute.Job{Config: cfg, StateKey: key, Run: run, Shard: shard, BaseDir: r.sc.BaseDir}
}

func (r runner) run(t *testing.T, j execute.Job) int64 {
	t.Helper()
	stats, err := r.ex.Run(context.Background(), j)
	require.NoError(t, err)
	return stats.RowsWritten
}

// ids counts the rows the destination holds per id.
func (r runner) ids(t *testing.T) map[int64]int {
	t.Helper()
	rows, _ := readBack(t, r.sc, []string{"id"})
	out := map[int64]int{}
	for _, row := range rows {
		var id int64
		_, err := fmt.Sscan(fmt.Sprint(row[0]), &id)
		require.NoError(t, err)
		out[id]++
	}
	return out
}

// each is ids 1..n, each held times times.
func each(n, times int) map[int64]int {
	out := map[int64]int{}
	for i := 1; i <= n; i++ {
		out[int64(i)] = times
	}
	return out
}

// exactlyOnceReplay: an exactly-once run reads to the end and commits; its finish never
// reaches the history (the member paused, the lease expired), so the same run executes
// again and must add nothing; a new run of the full read then writes everything again.
func exactlyOnceReplay(t *testing.T, h Harness) {
	const n = 25
	r := newRunner(h, h.NewSink(t))
	require.EqualValues(t, n, r.run(t, r.job(1, n, "_/replay", "run-1", nil)))
	require.Zero(t, r.run(t, r.job(1, n, "_/replay", "run-1", nil)), "the re-executed run writes nothing")
	require.Equal(t, each(n, 1), r.ids(t))
	require.EqualValues(t, n, r.run(t, r.job(1, n, "_/replay", "run-2", nil)), "a new run reads everything")
	require.Equal(t, each(n, 2), r.ids(t))
}

// exactlyOnceShards: the same for each shard of a sharded run, keyed as the cluster keys
// them (state key and run both "<run>::<index>").
func exactlyOnceShards(t *testing.T, h Harness) {
	const n, shards = 25, 3
	r := newRunner(h, h.NewSink(t))
	runAll := func(run string) (written int64) {
		for i := range shards {
			k := fmt.Sprintf("%s::%d", run, i)
			written += r.run(t, r.job(1, n, k, k, &execute.ShardSlice{Index: i, Count: shards}))
		}
		return written
	}
	require.EqualValues(t, n, runAll("run-1"))
	k := "run-1::1"
	require.Zero(t, r.run(t, r.job(1, n, k, k, &execute.ShardSlice{Index: 1, Count: shards})),
		"the re-executed shard writes nothing")
	require.Equal(t, each(n, 1), r.ids(t))
	require.EqualValues(t, n, runAll("run-2"), "the shards of a new run read everything")
	require.Equal(t, each(n, 2), r.ids(t))
}

// concurrentCreate: runs that start together on a table that does not exist yet all
// create it (create_table: true), all succeed, and every row of every run is there once.
// Half deliver exactly once, so the watermark table is created concurrently too.
func concurrentCreate(t *testing.T, h Harness) {
	const writers, per = 8, 15
	r := newRunner(h, h.NewSink(t))
	start := make(chan struct{})
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from := int64(w*per + 1)
			key := ""
			if w%2 == 1 {
				key = fmt.Sprintf("_/create-%d", w)
			}
			<-start
			_, errs[w] = r.ex.Run(context.Background(), r.job(from, from+per-1, key, key, nil))
		}()
	}
	close(start)
	wg.Wait()
	for w, err := range errs {
		require.NoError(t, err, "writer %d", w)
	}
	require.Equal(t, each(writers*per, 1), r.ids(t))
}
