package postgres_test

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/postgres"
	"github.com/sluicehq/sluice/application/execute"
)

// failFirst makes the first n inserts into table fail with sqlstate, the way a real
// deadlock or serialization failure ends a transaction (a sequence, not a table, counts
// the attempts: it is not rolled back with them).
func failFirst(t *testing.T, d *db, table, sqlstate string, n int) {
	t.Helper()
	d.exec(t, "CREATE SEQUENCE attempts")
	d.exec(t, `CREATE FUNCTION fail_first() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF nextval('attempts') <= `+strconv.Itoa(n)+` THEN
    RAISE EXCEPTION 'simulated conflict' USING ERRCODE = '`+sqlstate+`';
  END IF;
  RETURN NULL;
END $$`)
	d.exec(t, "CREATE TRIGGER fail_first BEFORE INSERT ON "+table+" FOR EACH STATEMENT EXECUTE FUNCTION fail_first()")
}

var fast = map[string]any{"attempts": int64(3), "initial_secs": 0.01, "max_secs": 0.05}

func sinkConfig(d *db, extra map[string]any) map[string]any {
	c := map[string]any{"connection_url": d.url, "table_name": "t", "write_mode": "upsert", "key": []string{"id"}, "retry": fast}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

func TestSinkRetriesAPageRolledBackByDeadlockOrSerializationFailure(t *testing.T) {
	t.Parallel()
	for _, state := range []string{"40001", "40P01"} {
		t.Run(state, func(t *testing.T) {
			t.Parallel()
			d := newDB(t)
			d.exec(t, "CREATE TABLE t (id bigint PRIMARY KEY, v text)")
			failFirst(t, d, "t", state, 2)
			page := conntest.Page([]string{"id", "v"}, []any{int64(1), "a"}, []any{int64(2), "b"})
			err := conntest.SinkRun(t, postgres.New(), execute.WriteRequest{Config: sinkConfig(d, nil), Bookmarks: true}, page)
			require.NoError(t, err, "two rolled-back attempts, the third writes")
			require.Equal(t, [][]any{{int64(1), "a"}, {int64(2), "b"}}, d.rows(t, "SELECT id, v FROM t ORDER BY id"))
		})
	}
}

func TestSinkGivesUpKeepingTheTransientMark(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (id bigint PRIMARY KEY, v text)")
	failFirst(t, d, "t", "40001", 9)
	page := conntest.Page([]string{"id", "v"}, []any{int64(1), "a"})
	err := conntest.SinkRun(t, postgres.New(), execute.WriteRequest{Config: sinkConfig(d, nil), Bookmarks: true}, page)
	require.ErrorContains(t, err, "simulated conflict")
	require.True(t, execute.IsTransient(err), "a run-level retry (on: transient) can see it: %v", err)
	var n int64
	require.NoError(t, d.conn.QueryRow(context.Background(), "SELECT last_value FROM attempts").Scan(&n))
	require.EqualValues(t, 3, n, "attempts: 3 tries of the page")
}

func TestSinkFailsAtOnceOnPermanentErrors(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (id bigint PRIMARY KEY, v text)")
	failFirst(t, d, "t", "23514", 1) // check_violation: the same every time
	page := conntest.Page([]string{"id", "v"}, []any{int64(1), "a"})
	err := conntest.SinkRun(t, postgres.New(), execute.WriteRequest{Config: sinkConfig(d, nil), Bookmarks: true}, page)
	require.ErrorContains(t, err, "simulated conflict")
	require.False(t, execute.IsTransient(err))
	var n int64
	require.NoError(t, d.conn.QueryRow(context.Background(), "SELECT last_value FROM attempts").Scan(&n))
	require.EqualValues(t, 1, n, "tried once")
}

// A server that drops every connection at once (restarting, a proxy cut off) is tried as
// many times as the retry block says, and the failure keeps its transient mark.
func TestConnectRetriesAndMarksADroppedConnection(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	accepted := make(chan struct{}, 10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			_ = c.Close()
		}
	}()
	cfg := map[string]any{"connection_url": "postgres://u@" + l.Addr().String() + "/db?sslmode=disable", "query": "SELECT 1",
		"retry": map[string]any{"attempts": int64(2), "initial_secs": 0.01, "max_secs": 0.02}}
	err = readErr(execute.ReadRequest{Config: cfg, BatchSize: 10})
	require.Error(t, err)
	require.True(t, execute.IsTransient(err), "%v", err)
	require.Len(t, accepted, 2, "two attempts")
}
