package mysql_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/mysql"
	"github.com/sluicehq/sluice/application/execute"
)

// failFirst makes the first n row inserts into t fail with sqlstate and error number errno, the
// way a real deadlock ends a transaction. A MyISAM table counts the attempts: it is not
// rolled back with them.
func failFirst(t *testing.T, d *db, sqlstate string, errno, n int) {
	t.Helper()
	d.exec(t, "CREATE TABLE attempts (n INT NOT NULL) ENGINE=MyISAM")
	d.exec(t, "INSERT INTO attempts VALUES (0)")
	d.exec(t, `CREATE TRIGGER fail_first BEFORE INSERT ON t FOR EACH ROW BEGIN
  UPDATE attempts SET n = n + 1;
  IF (SELECT n FROM attempts) <= `+strconv.Itoa(n)+` THEN
    SIGNAL SQLSTATE '`+sqlstate+`' SET MYSQL_ERRNO = `+strconv.Itoa(errno)+`, MESSAGE_TEXT = 'simulated conflict';
  END IF;
END`)
}

func attempts(t *testing.T, d *db) int64 {
	t.Helper()
	var n int64
	require.NoError(t, d.db.QueryRowContext(context.Background(), "SELECT n FROM attempts").Scan(&n))
	return n
}

func retryConfig(d *db) map[string]any {
	return map[string]any{"connection_url": d.url, "table_name": "t", "write_mode": "upsert", "key": []string{"id"},
		"retry": map[string]any{"attempts": int64(3), "initial_secs": 0.01, "max_secs": 0.05}}
}

func TestSinkRetriesAPageRolledBackByADeadlock(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(10))")
	failFirst(t, d, "40001", 1213, 2)
	page := conntest.Page([]string{"id", "v"}, []any{int64(1), "a"})
	require.NoError(t, conntest.SinkRun(t, mysql.New(), execute.WriteRequest{Config: retryConfig(d), Bookmarks: true}, page))
	require.Equal(t, [][]any{{int64(1), "a"}}, d.rows(t, "SELECT id, v FROM t"))
	require.EqualValues(t, 3, attempts(t, d))
}

func TestSinkGivesUpKeepingTheTransientMark(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(10))")
	failFirst(t, d, "40001", 1213, 9)
	page := conntest.Page([]string{"id", "v"}, []any{int64(1), "a"})
	err := conntest.SinkRun(t, mysql.New(), execute.WriteRequest{Config: retryConfig(d), Bookmarks: true}, page)
	require.ErrorContains(t, err, "simulated conflict")
	require.True(t, execute.IsTransient(err), "%v", err)
	require.EqualValues(t, 3, attempts(t, d))
}

func TestSinkFailsAtOnceOnPermanentErrors(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR(10))")
	failFirst(t, d, "45000", 1644, 9) // ER_SIGNAL_EXCEPTION: an application error, the same every time
	page := conntest.Page([]string{"id", "v"}, []any{int64(1), "a"})
	err := conntest.SinkRun(t, mysql.New(), execute.WriteRequest{Config: retryConfig(d), Bookmarks: true}, page)
	require.ErrorContains(t, err, "simulated conflict")
	require.False(t, execute.IsTransient(err))
	require.EqualValues(t, 1, attempts(t, d))
}
