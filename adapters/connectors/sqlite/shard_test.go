package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/sqlite"
	"github.com/sluicehq/sluice/application/execute"
)

// shardReq reads query from the file in dir, shard key k.
func shardReq(dir, query string) execute.ReadRequest {
	return execute.ReadRequest{BaseDir: dir, BatchSize: 7, Config: map[string]any{
		"connection_url": "s.db", "query": query, "shard": map[string]any{"key": "k"}}}
}

// readShards plans n shards and reads each, answering the ids every shard read.
func readShards(t *testing.T, req execute.ReadRequest, n int) (plan []execute.ShardSlice, ids map[int64]int) {
	t.Helper()
	plan, err := sqlite.New().PlanShards(context.Background(), req, n)
	require.NoError(t, err)
	ids = map[int64]int{}
	for i := range plan {
		r := req
		r.Shard = &plan[i]
		pages, err := readPages(t, r)
		require.NoError(t, err)
		for _, row := range allRows(pages) {
			ids[row[0].(int64)]++
		}
	}
	return plan, ids
}

func TestShardPlansCoverEveryRowOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "s.db"))
	exec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER)`)
	// Skewed keys: most small, a few huge and negative; every 10th row has none.
	for i := int64(1); i <= 200; i++ {
		var k any = i % 13
		switch {
		case i%10 == 0:
			k = nil
		case i%37 == 0:
			k = int64(1) << 60
		case i%41 == 0:
			k = -(int64(1) << 59)
		}
		exec(t, db, `INSERT INTO t VALUES (?, ?)`, i, k)
	}
	for _, n := range []int{1, 2, 8, 64} {
		plan, ids := readShards(t, shardReq(dir, "SELECT id, k FROM t"), n)
		require.LessOrEqual(t, len(plan), n)
		require.Len(t, ids, 200, "n=%d: every row is read", n)
		for id, c := range ids {
			require.Equal(t, 1, c, "n=%d: row %d read %d times", n, id, c)
		}
	}
}

func TestShardPlanOfTinyAndEmptyTables(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "s.db"))
	exec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER)`)
	plan, ids := readShards(t, shardReq(dir, "SELECT id, k FROM t"), 8)
	require.Len(t, plan, 1, "an empty source plans one shard")
	require.Empty(t, ids)

	exec(t, db, `INSERT INTO t VALUES (1, 5), (2, 5), (3, 6), (4, NULL)`)
	plan, ids = readShards(t, shardReq(dir, "SELECT id, k FROM t"), 8)
	require.Len(t, plan, 2, "count above the keys is capped at the keys")
	require.Equal(t, map[int64]int{1: 1, 2: 1, 3: 1, 4: 1}, ids)

	exec(t, db, `DELETE FROM t WHERE k IS NOT NULL`)
	plan, ids = readShards(t, shardReq(dir, "SELECT id, k FROM t"), 8)
	require.Len(t, plan, 1, "NULL keys only: one shard reads them")
	require.Equal(t, map[int64]int{4: 1}, ids)
}

func TestShardKeyMustBeAnIntegerColumn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "s.db"))
	exec(t, db, `CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT)`)
	exec(t, db, `INSERT INTO t VALUES (1, 'a'), (2, '3')`)
	ctx := context.Background()
	_, err := sqlite.New().PlanShards(ctx, shardReq(dir, "SELECT id, k FROM t"), 4)
	require.ErrorIs(t, err, execute.ErrShardKey)
	require.ErrorContains(t, err, `source.config.shard.key "k" is a non-integer`)

	_, err = sqlite.New().PlanShards(ctx, shardReq(dir, "SELECT id FROM t"), 4)
	require.ErrorIs(t, err, execute.ErrShardKey)
	require.ErrorContains(t, err, `"k" is not a column of the query (columns: id)`)

	_, err = sqlite.New().PlanShards(ctx, shardReq(dir, "SELECT id, k FROM t LIMIT 1"), 4)
	require.ErrorContains(t, err, "top-level LIMIT")
}
