package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/postgres"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

// stored is how PostgreSQL gives back a value the sink wrote: times rounded to the
// microsecond, as PostgreSQL reads RFC 3339 text.
func stored(v any) any {
	if tm, ok := v.(time.Time); ok {
		return tm.Round(time.Microsecond).UTC()
	}
	return v
}

// copied is how PostgreSQL gives back a value pgx copied in binary: times truncated.
func copied(v any) any {
	if tm, ok := v.(time.Time); ok {
		return tm.Truncate(time.Microsecond).UTC()
	}
	return v
}

func TestContract(t *testing.T) {
	t.Parallel()
	c := postgres.New()
	connector.Run(t, connector.Harness{
		Name: "postgres",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			d := newDB(t)
			d.exec(t, `CREATE TABLE t (id bigint PRIMARY KEY, name text, amount float8, active boolean, at timestamptz, note text)`)
			_, err := d.conn.CopyFrom(context.Background(), pgx.Identifier{"t"}, data.Columns, pgx.CopyFromRows(data.Rows))
			require.NoError(t, err)
			return connector.SourceCase{
				Source: c,
				Config: map[string]any{"connection_url": d.url, "query": "SELECT * FROM t ORDER BY id;"},
				Want:   connector.Map(data, copied),
			}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			d := newDB(t)
			return connector.BrokenCase{Source: c, Want: `relation "missing" does not exist`,
				Config: map[string]any{"connection_url": d.url, "query": "SELECT * FROM missing"}}
		},
		NewSink: func(t *testing.T) connector.SinkCase {
			d := newDB(t)
			return connector.SinkCase{
				Sink:   c,
				Config: map[string]any{"connection_url": d.url, "table_name": "t", "create_table": true},
				ReadBack: conntest.ReadBack(func(t *testing.T) bool { return d.tableExists(t, "t") },
					func(t *testing.T, cols []string) [][]any {
						return d.rows(t, "SELECT "+quoteCols(cols)+" FROM t ORDER BY ctid")
					}),
				Normalize: stored,
			}
		},
		Caps: connector.Capabilities{Incremental: true, Upsert: true, Delete: true, Overwrite: true,
			ExactlyOnce: true, ConcurrentCreate: true},
	})
}

func quoteCols(cols []string) string {
	out := ""
	for i, c := range cols {
		if i > 0 {
			out += ", "
		}
		out += pgx.Identifier{c}.Sanitize()
	}
	return out
}

// bookmarked opens sinks as an incremental run does: pages carry bookmarks, so each page
// must be final when Write returns (a COPY and commit per page instead of one COPY).
type bookmarked struct{ *postgres.Connector }

func (b bookmarked) OpenSink(ctx context.Context, req execute.WriteRequest) (execute.Sink, error) {
	req.Bookmarks = true
	return b.Connector.OpenSink(ctx, req)
}

func TestContractPerPageSink(t *testing.T) {
	t.Parallel()
	c := bookmarked{postgres.New()}
	spec := c.Spec()
	spec.Roles = pipeline.RoleSink
	connector.Run(t, connector.Harness{
		Name: "postgres-per-page",
		Spec: spec,
		NewSink: func(t *testing.T) connector.SinkCase {
			d := newDB(t)
			return connector.SinkCase{
				Sink:   c,
				Config: map[string]any{"connection_url": d.url, "table_name": "t", "create_table": true},
				ReadBack: conntest.ReadBack(func(t *testing.T) bool { return d.tableExists(t, "t") },
					func(t *testing.T, cols []string) [][]any {
						return d.rows(t, "SELECT "+quoteCols(cols)+" FROM t ORDER BY ctid")
					}),
				Normalize: stored,
			}
		},
		Caps: connector.Capabilities{Upsert: true, Delete: true, Overwrite: true},
	})
}
