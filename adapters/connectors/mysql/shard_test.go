package mysql_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/mysql"
	"github.com/sluicehq/sluice/application/execute"
)

func TestShardPlansCoverEveryRowOnce(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (id INT PRIMARY KEY, k BIGINT NULL, s VARCHAR(20))`)
	for i := 1; i <= 120; i++ {
		var k any = i % 11
		switch {
		case i%10 == 0:
			k = nil
		case i%37 == 0:
			k = int64(4000000000000)
		}
		d.exec(t, `INSERT INTO t VALUES (?, ?, ?)`, i, k, "n")
	}
	req := execute.ReadRequest{BatchSize: 25, Config: map[string]any{"connection_url": d.url,
		"query": "SELECT id, k, s FROM t", "shard": map[string]any{"key": "k"}}}
	plan, err := mysql.New().PlanShards(context.Background(), req, 6)
	require.NoError(t, err)
	require.Len(t, plan, 6)
	seen := map[int64]int{}
	for i := range plan {
		r := req
		r.Shard = &plan[i]
		pages, err := conntest.ReadAll(mysql.New(), r)
		require.NoError(t, err)
		for _, row := range conntest.AllRows(pages) {
			seen[row[0].(int64)]++
		}
	}
	require.Len(t, seen, 120)
	for id, n := range seen {
		require.Equal(t, 1, n, "row %d", id)
	}
}

func TestShardKeyMustBeAnIntegerColumn(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (id BIGINT, amount DECIMAL(10,2), name VARCHAR(10))`)
	_, err := mysql.New().PlanShards(context.Background(), execute.ReadRequest{Config: map[string]any{"connection_url": d.url,
		"query": "SELECT * FROM t", "shard": map[string]any{"key": "amount"}}}, 4)
	require.ErrorIs(t, err, execute.ErrShardKey)
	require.ErrorContains(t, err, `source.config.shard.key "amount" is a DECIMAL column`)
	_, err = mysql.New().PlanShards(context.Background(), execute.ReadRequest{Config: map[string]any{"connection_url": d.url,
		"query": "SELECT id FROM t", "shard": map[string]any{"key": "name"}}}, 4)
	require.ErrorContains(t, err, `"name" is not a column of the query (columns: id)`)
}
