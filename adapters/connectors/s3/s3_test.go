package s3_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/adapters/connectors/s3"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/tests/contract/connector"
	"github.com/sluicehq/sluice/tests/s3fake"
)

// fast is a retry block that retries quickly, so tests exercise retries without waiting.
func fast(cfg map[string]any, attempts int) map[string]any {
	cfg["retry"] = map[string]any{"attempts": int64(attempts), "initial_secs": 0.001, "max_secs": 0.005}
	return cfg
}

func read(t *testing.T, cfg map[string]any) ([]*execute.Page, error) {
	t.Helper()
	return conntest.ReadAll(s3.New(), execute.ReadRequest{Config: cfg})
}

func TestUnknownBucketNamesConnectorBucketAndCause(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	_, err := read(t, srv.Config("s3://no-such-bucket/data/*.csv"))
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "s3: "), err.Error())
	require.Contains(t, err.Error(), "s3://no-such-bucket/data/")
	require.Contains(t, err.Error(), "NoSuchBucket")
	require.False(t, execute.IsTransient(err), "a missing bucket is not worth a retry")

	_, err = s3.New().OpenSink(context.Background(), execute.WriteRequest{Config: srv.Config("s3://no-such-bucket/out/")})
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "s3: "), err.Error())
	require.Contains(t, err.Error(), "s3://no-such-bucket/")
	require.Contains(t, err.Error(), "does not exist")
}

func TestWrongCredentialsFailAtOnceWithoutTheSecret(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	require.NoError(t, srv.Put(context.Background(), b, "a.csv", []byte("x\n1\n")))
	cfg := srv.Config("s3://" + b + "/a.csv")
	cfg["access_key_id"] = "AKIAWRONG"
	cfg["secret_access_key"] = "wrong-secret-value-123"
	before := srv.Requests()
	_, err := read(t, fast(cfg, 5))
	require.Error(t, err)
	require.Contains(t, err.Error(), "InvalidAccessKeyId")
	require.Contains(t, err.Error(), "s3://"+b+"/a.csv")
	require.Contains(t, err.Error(), "access_key_id / secret_access_key")
	require.NotContains(t, err.Error(), "wrong-secret-value-123")
	require.Equal(t, 1, srv.Requests()-before, "a refused credential is not retried")

	_, err = s3.New().OpenSink(context.Background(), execute.WriteRequest{Config: fast(cfg, 5)})
	require.ErrorContains(t, err, "check access_key_id / secret_access_key", "a HEAD answer has no body to name the code")
	require.NotContains(t, err.Error(), "wrong-secret-value-123")
}

func TestTransientErrorsAreRetriedPerRequest(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	data := connector.Data(40)
	require.NoError(t, srv.Put(context.Background(), b, "in/a.parquet", encode(t, format.Parquet, data)))
	require.NoError(t, srv.Put(context.Background(), b, "in/b.csv", connector.WriteCSV(t, data)))
	srv.Fail(
		s3fake.Fault{Method: http.MethodGet, PathContains: "list-type=2", Status: http.StatusServiceUnavailable, Code: "SlowDown"},
		s3fake.Fault{Method: http.MethodGet, PathContains: "/in/a.parquet", Status: http.StatusInternalServerError, Code: "InternalError"},
		s3fake.Fault{Method: http.MethodGet, PathContains: "/in/a.parquet", Status: http.StatusTooManyRequests, Code: "TooManyRequests"},
	)
	pages, err := read(t, fast(srv.Config("s3://"+b+"/in/*.parquet"), 3))
	require.NoError(t, err)
	require.Equal(t, data.Rows, conntest.AllRows(pages))
	require.Zero(t, srv.Pending(), "every injected failure was met and retried")

	// A CSV body cut off mid-object resumes from the byte it reached.
	srv.Fail(s3fake.Fault{Method: http.MethodGet, PathContains: "/in/b.csv", Cut: 300})
	pages, err = read(t, fast(srv.Config("s3://"+b+"/in/b.csv"), 3))
	require.NoError(t, err)
	require.Equal(t, connector.Map(data, connector.Text).Rows, conntest.AllRows(pages))
	require.Zero(t, srv.Pending())
}

func TestTransientErrorsGiveUpMarkedTransient(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	require.NoError(t, srv.Put(context.Background(), b, "a.csv", []byte("x\n1\n")))
	for range 3 {
		srv.Fail(s3fake.Fault{Method: http.MethodGet, PathContains: "list-type=2", Status: http.StatusServiceUnavailable, Code: "SlowDown"})
	}
	_, err := read(t, fast(srv.Config("s3://"+b+"/a.csv"), 3))
	require.Error(t, err)
	require.True(t, execute.IsTransient(err), "the run-level retry policy sees a transient failure: %v", err)
	require.Contains(t, err.Error(), "SlowDown")
	require.Zero(t, srv.Pending(), "three attempts were made")
}

func sinkConfig(srv *s3fake.Server, b, prefix string) map[string]any {
	cfg := srv.Config("s3://" + b + "/" + prefix)
	cfg["max_rows_per_object"] = int64(10)
	return cfg
}

func writeRun(t *testing.T, c *s3.Connector, cfg map[string]any, run string, sh *execute.ShardSlice, rows int) {
	t.Helper()
	d := connector.Data(rows)
	require.NoError(t, conntest.SinkRun(t, c, execute.WriteRequest{Config: cfg, Run: run, Shard: sh},
		&execute.Page{Columns: d.Columns, Rows: d.Rows}))
}

func TestSinkNamesObjectsPerRunShardAndPart(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	ctx := context.Background()
	c := s3.New()
	cfg := sinkConfig(srv, b, "exports")

	writeRun(t, c, cfg, "run-1::2", &execute.ShardSlice{Index: 2, Count: 4}, 25)
	keys, err := srv.Keys(ctx, b, "")
	require.NoError(t, err)
	want := []string{
		"exports/run-1/part-0002-00000.parquet",
		"exports/run-1/part-0002-00001.parquet",
		"exports/run-1/part-0002-00002.parquet",
	}
	require.Equal(t, want, keys, "max_rows_per_object rolls parts; names are (run, shard, part)")

	// The same shard of the same run executing again overwrites its own objects.
	writeRun(t, c, cfg, "run-1::2", &execute.ShardSlice{Index: 2, Count: 4}, 25)
	keys, err = srv.Keys(ctx, b, "")
	require.NoError(t, err)
	require.Equal(t, want, keys)
	rows, _ := readObjects(t, srv, b, "exports/", connector.Data(0).Columns)
	require.Equal(t, connector.Data(25).Rows, rows, "nothing is duplicated")

	// An unnamed run (sluice run) is a new run each time.
	writeRun(t, c, sinkConfig(srv, b, "adhoc/"), "", nil, 5)
	writeRun(t, c, sinkConfig(srv, b, "adhoc/"), "", nil, 5)
	keys, err = srv.Keys(ctx, b, "adhoc/")
	require.NoError(t, err)
	require.Len(t, keys, 2)
}

func TestSinkUploadsLargeObjectsInParts(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	c := s3.New(s3.WithPartSize(4 << 10))
	cfg := srv.Config("s3://" + b + "/big")
	cfg["compression"] = "none"
	cfg["row_group_rows"] = int64(50)
	before := srv.Requests()
	d := connector.Data(5000)
	var pages []*execute.Page
	for i := 0; i < len(d.Rows); i += 500 {
		pages = append(pages, &execute.Page{Columns: d.Columns, Rows: d.Rows[i : i+500]})
	}
	require.NoError(t, conntest.SinkRun(t, c, execute.WriteRequest{Config: cfg, Run: "r"}, pages...))
	require.Greater(t, srv.Requests()-before, 10, "the object went up in several parts")
	rows, _ := readObjects(t, srv, b, "big/", d.Columns)
	require.Equal(t, d.Rows, rows)
}

func TestSinkCancelledMidwayLeavesNoObject(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snk, err := s3.New(s3.WithPartSize(1<<10)).OpenSink(ctx, execute.WriteRequest{Config: sinkConfig(srv, b, "out"), Run: "r"})
	require.NoError(t, err)
	d := connector.Data(100)
	for i := 0; i < 60; i += 10 {
		require.NoError(t, snk.Write(ctx, &execute.Page{Columns: d.Columns, Rows: d.Rows[i : i+10]}))
	}
	ups, err := srv.Uploads(context.Background(), b)
	require.NoError(t, err)
	require.NotEmpty(t, ups, "parts were uploaded while the run went on")
	cancel()
	require.ErrorIs(t, snk.Write(ctx, &execute.Page{Columns: d.Columns, Rows: d.Rows[60:70]}), context.Canceled)
	require.NoError(t, snk.Abort(ctx))
	keys, err := srv.Keys(context.Background(), b, "")
	require.NoError(t, err)
	require.Empty(t, keys, "no object is ever visible before Commit")
	ups, err = srv.Uploads(context.Background(), b)
	require.NoError(t, err)
	require.Empty(t, ups, "every upload was aborted")
}

func TestShardsReadEachObjectOnce(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	ctx := context.Background()
	for i := range 12 {
		d := connector.Dataset{Columns: []string{"id"}, Rows: [][]any{{int64(i)}}}
		require.NoError(t, srv.Put(ctx, b, fmt.Sprintf("k/%02d.parquet", i), encode(t, format.Parquet, d)))
	}
	c := s3.New()
	cfg := srv.Config("s3://" + b + "/k/*.parquet")
	plan, err := c.PlanShards(ctx, execute.ReadRequest{Config: cfg}, 20)
	require.NoError(t, err)
	require.Len(t, plan, 20, "more shards than objects: some read nothing")
	seen := map[int64]int{}
	for _, sh := range plan {
		pages, err := conntest.ReadAll(c, execute.ReadRequest{Config: cfg, Shard: &sh})
		require.NoError(t, err, "a shard whose bucket holds no key reads nothing, without failing")
		for _, r := range conntest.AllRows(pages) {
			seen[r[0].(int64)]++
		}
	}
	require.Len(t, seen, 12)
	for id, n := range seen {
		require.Equal(t, 1, n, "object %d read once", id)
	}
}

func TestConfigChecks(t *testing.T) {
	t.Parallel()
	spec := s3.New().Spec()
	cases := []struct {
		role pipeline.Role
		cfg  map[string]any
		key  string
		want string
	}{
		{pipeline.RoleSource, map[string]any{"path": "bucket/x.csv"}, "path", "must start with s3://"},
		{pipeline.RoleSource, map[string]any{"path": "s3:///x.csv"}, "path", "names no bucket"},
		{pipeline.RoleSink, map[string]any{"path": "s3://b/out/*.csv"}, "path", "cannot hold a glob"},
		{pipeline.RoleSource, map[string]any{"path": "s3://b/x.txt"}, "format", "set format"},
		{pipeline.RoleSource, map[string]any{"path": "s3://b/x.csv", "access_key_id": "A"}, "secret_access_key", "set together"},
		{pipeline.RoleSource, map[string]any{"path": "s3://b/x.csv", "endpoint": "minio:9000"}, "endpoint", "http(s) URL"},
		{pipeline.RoleSink, map[string]any{"path": "s3://b/o", "compression": "lz4"}, "compression", "zstd, snappy or none"},
		{pipeline.RoleSink, map[string]any{"path": "s3://b/o", "write_mode": "upsert"}, "write_mode", "append"},
	}
	for _, tc := range cases {
		errs := spec.Check(tc.role, tc.cfg, "pipeline.source.config")
		require.Len(t, errs, 1, "%v", tc.cfg)
		require.Equal(t, "pipeline.source.config."+tc.key, errs[0].Path)
		require.Contains(t, errs[0].Message, tc.want)
	}
	require.Empty(t, spec.Check(pipeline.RoleSink, map[string]any{"path": "s3://b/o"}, "p"), "the sink writes Parquet unless told")
}

func TestTargetsNameTheEndpointHost(t *testing.T) {
	t.Parallel()
	c := s3.New()
	require.Equal(t, []execute.Target{{Key: "endpoint", Host: "minio.internal", Port: 9000}},
		c.Targets(pipeline.RoleSource, map[string]any{"path": "s3://b/x.csv", "endpoint": "http://minio.internal:9000"}))
	require.Equal(t, []execute.Target{{Key: "path", Host: "b.s3.eu-west-1.amazonaws.com", Port: 443}},
		c.Targets(pipeline.RoleSource, map[string]any{"path": "s3://b/x.csv", "region": "eu-west-1"}))
}

// A corrupt Parquet object (a .parquet key holding other bytes) fails the read at once,
// naming the connector, the object and the cause; it is not retried, since the bytes
// will not change on a second try.
func TestCorruptParquetObjectNamesTheObject(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	b := bucket(t, srv)
	require.NoError(t, srv.Put(context.Background(), b, "in/good.csv", []byte("x\n1\n")))
	require.NoError(t, srv.Put(context.Background(), b, "in/part-2.parquet", []byte("id,name\n1,not parquet\n")))
	before := srv.Requests()
	_, err := read(t, fast(srv.Config("s3://"+b+"/in/*.parquet"), 5))
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "s3: "), err.Error())
	require.Contains(t, err.Error(), "s3://"+b+"/in/part-2.parquet: not a readable Parquet file")
	require.False(t, execute.IsTransient(err), "corrupt bytes are not worth a retry")
	require.LessOrEqual(t, srv.Requests()-before, 3, "no retries of a corrupt object: %d requests", srv.Requests()-before)
}
