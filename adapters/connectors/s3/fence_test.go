package s3_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/s3"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

// dataKeys drops the writer markers from keys.
func dataKeys(keys []string) []string {
	return slices.DeleteFunc(keys, func(k string) bool { return strings.Contains(k, "/_sluice-writer-") })
}

// A stale writer (its lease lost while paused, the run reclaimed by another member)
// wakes up and commits after the new owner opened the same shard: its uploads were
// aborted by the new owner and its commit is refused, so only the new owner's objects
// ever appear.
func TestStaleWriterCannotCompleteOverTheNewOwner(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	ctx := context.Background()
	c := s3.New(s3.WithPartSize(1 << 10))
	cfg := sinkConfig(srv, b, "out")
	cfg["max_rows_per_object"] = int64(100)
	req := execute.WriteRequest{Config: cfg, Run: "run-7::1", Shard: &execute.ShardSlice{Index: 1, Count: 2}}
	d := connector.Data(50)
	stale, err := c.OpenSink(ctx, req)
	require.NoError(t, err)
	require.NoError(t, stale.Write(ctx, &execute.Page{Columns: d.Columns, Rows: d.Rows[:30]}))

	owner, err := c.OpenSink(ctx, req)
	require.NoError(t, err)
	ups, err := srv.Uploads(ctx, b)
	require.NoError(t, err)
	require.Empty(t, ups, "the new owner aborted the stale writer's open upload")

	err = stale.Commit(ctx)
	require.ErrorIs(t, err, run.ErrLeaseLost)
	require.ErrorContains(t, err, "another writer")
	keys, err := srv.Keys(ctx, b, "out/")
	require.NoError(t, err)
	require.Empty(t, dataKeys(keys), "the stale writer completed nothing")

	require.NoError(t, owner.Write(ctx, &execute.Page{Columns: d.Columns, Rows: d.Rows}))
	require.NoError(t, owner.Commit(ctx))
	rows, _ := readObjects(t, srv, b, "out/", d.Columns)
	require.Equal(t, d.Rows, rows, "the new owner's rows, whole")
}

// The stale writer's uploads may also start after the new owner opened (it was paused
// before its first page): the marker check at commit refuses them, and aborts them.
func TestStaleWriterStartingLateIsRefusedAtCommit(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	ctx := context.Background()
	c := s3.New()
	req := execute.WriteRequest{Config: sinkConfig(srv, b, "late"), Run: "run-8"}
	d := connector.Data(25)
	stale, err := c.OpenSink(ctx, req)
	require.NoError(t, err)
	owner, err := c.OpenSink(ctx, req)
	require.NoError(t, err)
	require.NoError(t, owner.Write(ctx, &execute.Page{Columns: d.Columns, Rows: d.Rows}))
	require.NoError(t, owner.Commit(ctx))

	require.NoError(t, stale.Write(ctx, &execute.Page{Columns: d.Columns, Rows: d.Rows[:5]}))
	require.ErrorIs(t, stale.Commit(ctx), run.ErrLeaseLost)
	ups, err := srv.Uploads(ctx, b)
	require.NoError(t, err)
	require.Empty(t, ups, "the refused writer aborted its uploads")
	rows, _ := readObjects(t, srv, b, "late/", d.Columns)
	require.Equal(t, d.Rows, rows, "the owner's objects are untouched")
}

// While a writer is at work its marker lies beside the objects; the s3 source never
// reads it as data, and a finished writer leaves no marker behind.
func TestSourceSkipsWriterMarkers(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	ctx := context.Background()
	d := connector.Data(12)
	require.NoError(t, srv.Put(ctx, b, "m/run-9/a.csv", connector.WriteCSV(t, d)))
	snk, err := s3.New().OpenSink(ctx, execute.WriteRequest{Config: sinkConfig(srv, b, "m"), Run: "run-9"})
	require.NoError(t, err)
	keys, err := srv.Keys(ctx, b, "m/")
	require.NoError(t, err)
	require.Equal(t, []string{"m/run-9/_sluice-writer-0000", "m/run-9/a.csv"}, keys)
	cfg := srv.Config("s3://" + b + "/m/run-9/*")
	cfg["format"] = "csv"
	pages, err := read(t, cfg)
	require.NoError(t, err)
	n := 0
	for _, p := range pages {
		n += p.Len()
	}
	require.Equal(t, len(d.Rows), n, "the marker is not data")

	require.NoError(t, snk.Write(ctx, &execute.Page{Columns: d.Columns, Rows: d.Rows}))
	require.NoError(t, snk.Commit(ctx))
	keys, err = srv.Keys(ctx, b, "m/")
	require.NoError(t, err)
	require.Equal(t, []string{"m/run-9/a.csv", "m/run-9/part-0000-00000.parquet", "m/run-9/part-0000-00001.parquet"}, keys,
		"the committed writer released its marker")
}
