package s3_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/adapters/connectors/s3"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/tests/contract/connector"
	"github.com/sluicehq/sluice/tests/s3fake"
)

func startServer(t *testing.T) *s3fake.Server {
	t.Helper()
	srv, err := s3fake.Start()
	require.NoError(t, err)
	t.Cleanup(func() {
		srv.Close()
		http.DefaultClient.CloseIdleConnections()
	})
	return srv
}

// bucket makes a fresh bucket on srv.
func bucket(t *testing.T, srv *s3fake.Server) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[len(name)-50:]
	}
	name = "b" + strings.Trim(name, "-")
	require.NoError(t, srv.CreateBucket(name))
	return name
}

// encode writes d in format f with the shared writer.
func encode(t *testing.T, f string, d connector.Dataset) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := format.NewWriter(&buf, format.Options{Format: f, CSV: format.CSVOptions{Comma: ',', Header: true}, Compression: format.Zstd, RowGroupRows: 4}, nil)
	require.NoError(t, err)
	if len(d.Rows) > 0 {
		require.NoError(t, w.Write(&execute.Page{Columns: d.Columns, Rows: d.Rows}))
	}
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// readObjects reads back every object under prefix through the shared Parquet reader.
func readObjects(t *testing.T, srv *s3fake.Server, b, prefix string, cols []string) ([][]any, bool) {
	t.Helper()
	ctx := context.Background()
	keys, err := srv.Keys(ctx, b, prefix)
	require.NoError(t, err)
	var rows [][]any
	keys = dataKeys(keys) // a writer still at work has its marker there
	for _, k := range keys {
		data, err := srv.Get(ctx, b, k)
		require.NoError(t, err)
		rows = append(rows, conntest.ReadParquet(t, bytes.NewReader(data), int64(len(data)), k, cols)...)
	}
	return rows, len(keys) > 0
}

// uploads lists b's multipart uploads in progress: a sink's leftovers.
func uploads(srv *s3fake.Server, b string) func(t *testing.T) []string {
	return func(t *testing.T) []string {
		ups, err := srv.Uploads(context.Background(), b)
		require.NoError(t, err)
		return ups
	}
}

func TestContractParquet(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := s3.New()
	connector.Run(t, connector.Harness{
		Name: "s3 parquet",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			b := bucket(t, srv)
			// Two objects matched by the glob, one not: the rows come in key order.
			half := len(data.Rows) / 2
			first := connector.Dataset{Columns: data.Columns, Rows: data.Rows[:half]}
			second := connector.Dataset{Columns: data.Columns, Rows: data.Rows[half:]}
			ctx := context.Background()
			require.NoError(t, srv.Put(ctx, b, "in/a.parquet", encode(t, format.Parquet, first)))
			require.NoError(t, srv.Put(ctx, b, "in/b.parquet", encode(t, format.Parquet, second)))
			require.NoError(t, srv.Put(ctx, b, "in/c.csv", []byte("not,matched\n")))
			return connector.SourceCase{Source: c, Config: srv.Config("s3://" + b + "/in/*.parquet"), Want: data}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			b := bucket(t, srv)
			require.NoError(t, srv.Put(context.Background(), b, "bad.parquet", []byte("PAR1 this is no parquet PAR1")))
			return connector.BrokenCase{Source: c, Config: srv.Config("s3://" + b + "/*.parquet"),
				Want: "s3://" + b + "/bad.parquet: not a readable Parquet file"}
		},
		NewSink: func(t *testing.T) connector.SinkCase {
			b := bucket(t, srv)
			cfg := srv.Config("s3://" + b + "/out")
			cfg["max_rows_per_object"] = int64(7)
			return connector.SinkCase{
				Sink: c, Config: cfg,
				ReadBack:  func(t *testing.T, cols []string) ([][]any, bool) { return readObjects(t, srv, b, "out/", cols) },
				Leftovers: uploads(srv, b),
			}
		},
		Caps: connector.Capabilities{Incremental: true, Reaches: connector.Reaches{Dials: true}},
	})
}

func TestContractCSV(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := s3.New()
	connector.Run(t, connector.Harness{
		Name: "s3 csv",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			b := bucket(t, srv)
			require.NoError(t, srv.Put(context.Background(), b, "in.csv", connector.WriteCSV(t, data)))
			return connector.SourceCase{Source: c, Config: srv.Config("s3://" + b + "/in.csv"), Want: connector.Map(data, connector.Text)}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			b := bucket(t, srv)
			require.NoError(t, srv.Put(context.Background(), b, "bad.csv", []byte("a,b\n1,2\n3\n")))
			return connector.BrokenCase{Source: c, Config: srv.Config("s3://" + b + "/bad.csv"), Want: "s3://" + b + "/bad.csv line 3"}
		},
		NewSink: func(t *testing.T) connector.SinkCase {
			b := bucket(t, srv)
			cfg := srv.Config("s3://" + b + "/out/")
			cfg["format"] = "csv"
			return connector.SinkCase{
				Sink: c, Config: cfg,
				ReadBack: func(t *testing.T, cols []string) ([][]any, bool) {
					ctx := context.Background()
					keys, err := srv.Keys(ctx, b, "out/")
					require.NoError(t, err)
					var rows [][]any
					for _, k := range keys {
						require.True(t, strings.HasSuffix(k, ".csv"), k)
						data, err := srv.Get(ctx, b, k)
						require.NoError(t, err)
						rows = append(rows, connector.ParseCSV(t, data, cols)...)
					}
					return rows, len(keys) > 0
				},
				Normalize: connector.Text,
				Leftovers: uploads(srv, b),
			}
		},
		Caps: connector.Capabilities{Incremental: true, Reaches: connector.Reaches{Dials: true}},
	})
}
