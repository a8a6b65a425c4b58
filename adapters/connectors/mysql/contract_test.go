package mysql_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/mysql"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

// stored is how MariaDB gives back a value: booleans as 0/1, times cut to the
// microsecond.
func stored(v any) any {
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case time.Time:
		return x.Truncate(time.Microsecond).UTC()
	}
	return v
}

func quoteCols(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = "`" + c + "`"
	}
	return strings.Join(q, ", ")
}

func TestContract(t *testing.T) {
	t.Parallel()
	c := mysql.New()
	connector.Run(t, connector.Harness{
		Name: "mysql",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			d := newDB(t)
			d.exec(t, "CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT, amount DOUBLE, active BOOLEAN, at DATETIME(6), note TEXT)")
			for _, r := range data.Rows {
				d.exec(t, "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", r...)
			}
			return connector.SourceCase{
				Source: c,
				Config: map[string]any{"connection_url": d.url, "query": "SELECT * FROM t ORDER BY id;"},
				Want:   connector.Map(data, stored),
			}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			d := newDB(t)
			return connector.BrokenCase{Source: c, Want: ".missing' doesn't exist",
				Config: map[string]any{"connection_url": d.url, "query": "SELECT * FROM missing"}}
		},
		NewSink: func(t *testing.T) connector.SinkCase {
			d := newDB(t)
			return connector.SinkCase{
				Sink:   c,
				Config: map[string]any{"connection_url": d.url, "table_name": "t", "create_table": true},
				ReadBack: conntest.ReadBack(func(t *testing.T) bool { return d.tableExists(t, "t") },
					func(t *testing.T, cols []string) [][]any { return d.rows(t, "SELECT "+quoteCols(cols)+" FROM t") }),
				Normalize: stored,
			}
		},
		Caps: connector.Capabilities{Incremental: true, Upsert: true, Delete: true, Overwrite: true,
			ExactlyOnce: true, ConcurrentCreate: true},
	})
}
