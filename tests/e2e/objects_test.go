package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/s3fake"
	"github.com/sluicehq/sluice/tests/testdb"
)

// Object stores end to end (SPEC §14.4): the store is gofakes3 in this test process,
// spoken to by the members' real AWS SDK over loopback HTTP.

// lakeRow is one row of the Parquet data set, written by parquet-go's struct mapping.
type lakeRow struct {
	ID     int64     `parquet:"id"`
	Name   string    `parquet:"name"`
	Amount float64   `parquet:"amount"`
	At     time.Time `parquet:"at,timestamp(microsecond)"`
}

func startS3(t *testing.T, bucket string) *s3fake.Server {
	t.Helper()
	srv, err := s3fake.Start()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	require.NoError(t, srv.CreateBucket(bucket))
	return srv
}

// s3Env is what the members need to reach srv.
func s3Env(srv *s3fake.Server, extra map[string]string) map[string]string {
	env := map[string]string{"S3_ENDPOINT": srv.URL, "S3_KEY": s3fake.KeyID, "S3_SECRET": s3fake.Secret}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

const s3Keys = `endpoint: "${env:S3_ENDPOINT}", access_key_id: "${env:S3_KEY}", secret_access_key: "${env:S3_SECRET}"`

// A 100k-row Parquet set in S3 (16 objects) sharded 4 ways over three members into a
// PostgreSQL upsert sink ends with every row exactly once.
func TestS3ParquetShardedIntoPostgres(t *testing.T) {
	t.Parallel()
	rows := e2e.Rows(t, 20000)
	srv := startS3(t, "lake")
	const objects = 16
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for o := range objects {
		var buf bytes.Buffer
		w := parquet.NewGenericWriter[lakeRow](&buf, parquet.MaxRowsPerRowGroup(2000))
		batch := make([]lakeRow, 0, rows/objects+1)
		for id := o + 1; id <= rows; id += objects {
			batch = append(batch, lakeRow{ID: int64(id), Name: fmt.Sprintf("name-%d", id), Amount: float64(id) * 1.25,
				At: base.Add(time.Duration(id) * time.Second)})
		}
		_, err := w.Write(batch)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		require.NoError(t, srv.Put(context.Background(), "lake", fmt.Sprintf("orders/part-%02d.parquet", o), buf.Bytes()))
	}
	require.NoError(t, srv.Put(context.Background(), "lake", "orders/_SUCCESS", nil))

	dst := newPGSchema(t)
	dst.exec(t, `CREATE TABLE dst (id bigint PRIMARY KEY, name text, amount double precision, at timestamptz)`)
	cfg := clusterConfig(testdb.Postgres(t), 5)
	cfg.Env = s3Env(srv, map[string]string{"DST_URL": dst.url})
	c := e2e.StartCluster(t, 3, cfg, nil)

	start := time.Now()
	id := c.Members[0].MustSubmit(t, e2e.SubmitRequest{Config: fmt.Sprintf(`version: 1
name: s3-parquet-to-pg
shard: {count: 4}
pipeline:
  source:
    type: s3
    config: {path: "s3://lake/orders/*.parquet", %s, batch_size: 1000}
  sink:
    type: postgres
    config: {connection_url: "${env:DST_URL}", table_name: dst, write_mode: upsert, key: [id]}
`, s3Keys)})
	r := c.WaitTerminal(t, []string{id}, 3*time.Minute)[id]
	t.Logf("%d rows from %d objects in 4 shards over 3 members: %s", rows, objects, time.Since(start).Round(time.Millisecond))
	require.Equal(t, "completed", r.Status, "%+v", r.Error)
	require.Equal(t, e2e.ShardCounts{Total: 4, Completed: 4}, *r.Shards)
	require.Equal(t, int64(rows), r.Stats.RowsWritten)
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(*) FROM dst"))
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(DISTINCT id) FROM dst"))
	require.Zero(t, dst.int(t, "SELECT count(*) FROM dst WHERE name <> 'name-' || id OR amount <> id * 1.25"), "values arrive unchanged")
	require.Zero(t, dst.int(t, `SELECT count(*) FROM dst WHERE at <> '2026-01-01T00:00:00Z'::timestamptz + id * interval '1 second'`), "timestamps arrive unchanged")
}

// A PostgreSQL → S3 Parquet run cancelled while its multipart upload is open leaves no
// object and no upload behind.
func TestPostgresToS3CancelledLeavesNoObject(t *testing.T) {
	t.Parallel()
	rows := e2e.Rows(t, 20000)
	srv := startS3(t, "out")
	src := newPGSchema(t)
	slowSource(t, src, rows, 30*time.Second)
	cfg := clusterConfig(testdb.Postgres(t), 5)
	cfg.Env = s3Env(srv, map[string]string{"SRC_URL": src.url})
	c := e2e.StartCluster(t, 1, cfg, nil)
	m := c.Members[0]

	id := m.MustSubmit(t, e2e.SubmitRequest{Config: fmt.Sprintf(`version: 1
name: pg-to-s3
pipeline:
  source:
    type: postgres
    config: {connection_url: "${env:SRC_URL}", query: "SELECT id, name, amount, at FROM src WHERE slow(id)", batch_size: 500}
  sink:
    type: s3
    config: {path: "s3://out/exports/orders", %s, format: parquet, row_group_rows: 1000}
`, s3Keys)})
	m.WaitRun(t, id, time.Minute, "running with rows written", func(r e2e.RunResource) bool {
		return r.Status == "running" && r.Stats.RowsWritten > 0
	})
	ups, err := srv.Uploads(context.Background(), "out")
	require.NoError(t, err)
	require.NotEmpty(t, ups, "the sink is mid-upload")
	require.Contains(t, []int{200, 202}, m.Cancel(t, id))
	r := c.WaitTerminal(t, []string{id}, time.Minute)[id]
	require.Equal(t, "cancelled", r.Status)
	keys, err := srv.Keys(context.Background(), "out", "")
	require.NoError(t, err)
	require.Empty(t, keys, "a cancelled run leaves no object")
	ups, err = srv.Uploads(context.Background(), "out")
	require.NoError(t, err)
	require.Empty(t, ups, "its multipart upload was aborted")
}

// examplePath is a file of examples/objects.
func examplePath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", "objects", name))
	require.NoError(t, err)
	return p
}

// The README's object-store examples validate and run as written: orders go from
// PostgreSQL to Parquet objects in S3, and from there into another PostgreSQL schema,
// unchanged.
func TestObjectExamplesRoundTrip(t *testing.T) {
	t.Parallel()
	export, load := examplePath(t, "postgres-to-s3-parquet.yaml"), examplePath(t, "s3-parquet-to-postgres.yaml")
	srv := startS3(t, "lake")
	src, dst := newPGSchema(t), newPGSchema(t)
	src.exec(t, `CREATE TABLE orders AS SELECT g::bigint AS id, 'customer-' || (g % 7) AS customer,
		(g * 2.5)::numeric(12,2) AS amount, CASE WHEN g % 3 = 0 THEN NULL ELSE 'paid' END AS status,
		timestamptz '2026-03-01 00:00:00+00' + g * interval '1 minute' AS created_at
		FROM generate_series(1, 5000) g`)
	env := map[string]string{"S3_ENDPOINT": srv.URL, "S3_ACCESS_KEY_ID": s3fake.KeyID, "S3_SECRET_ACCESS_KEY": s3fake.Secret,
		"WAREHOUSE_URL": src.url}
	for _, p := range []string{export, load} {
		r := e2e.Run(t, e2e.Cmd{Args: []string{"validate", p}, Env: env})
		require.Equal(t, 0, r.Code, r.String())
	}

	env["WAREHOUSE_URL"] = src.url
	r := e2e.Run(t, e2e.Cmd{Args: []string{"run", export}, Env: env, Dir: t.TempDir()})
	require.Equal(t, 0, r.Code, r.String())
	require.NotContains(t, r.Stdout+r.Stderr, s3fake.Secret, "the secret never reaches the output")
	ctx := context.Background()
	keys, err := srv.Keys(ctx, "lake", "exports/orders/")
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Regexp(t, `^exports/orders/[0-9a-f-]{36}/part-0000-00000\.parquet$`, keys[0])
	data, err := srv.Get(ctx, "lake", keys[0])
	require.NoError(t, err)
	require.NoError(t, srv.Put(ctx, "lake", "orders/2026-03.parquet", data))

	env["WAREHOUSE_URL"] = dst.url
	r = e2e.Run(t, e2e.Cmd{Args: []string{"run", load}, Env: env, Dir: t.TempDir()})
	require.Equal(t, 0, r.Code, r.String())
	require.Equal(t, int64(5000), dst.int(t, "SELECT count(*) FROM orders"))
	same := fmt.Sprintf(`SELECT count(*) FROM %s.orders d JOIN %s.orders s USING (id)
		WHERE d.customer = s.customer AND d.amount::numeric = s.amount
		AND d.status IS NOT DISTINCT FROM s.status AND d.created_at = s.created_at`, schemaOf(t, dst), schemaOf(t, src))
	require.Equal(t, int64(5000), dst.int(t, same), "every row arrives unchanged (numeric as its exact text)")
}

// schemaOf is the schema a pgSchema's URL puts first on the search path.
func schemaOf(t *testing.T, s *pgSchema) string {
	t.Helper()
	u, err := url.Parse(s.url)
	require.NoError(t, err)
	schema := u.Query().Get("search_path")
	require.NotEmpty(t, schema)
	return schema
}
