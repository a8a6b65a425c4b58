package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/postgres"
	"github.com/sluicehq/sluice/application/execute"
)

func TestShardPlansCoverEveryRowOnce(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t AS SELECT g::int AS id,
		CASE WHEN g % 10 = 0 THEN NULL WHEN g % 37 = 0 THEN 4000000000000 ELSE g % 13 END::bigint AS k, 'n' || g AS s
		FROM generate_series(1, 300) g`)
	req := execute.ReadRequest{BatchSize: 50, Config: map[string]any{"connection_url": d.url,
		"query": "SELECT id, k, s FROM t", "shard": map[string]any{"key": "k"}}}
	plan, err := postgres.New().PlanShards(context.Background(), req, 8)
	require.NoError(t, err)
	require.Len(t, plan, 8)
	seen := map[int64]int{}
	for i := range plan {
		r := req
		r.Shard = &plan[i]
		pages, err := conntest.ReadAll(postgres.New(), r)
		require.NoError(t, err)
		for _, row := range conntest.AllRows(pages) {
			seen[row[0].(int64)]++
		}
	}
	require.Len(t, seen, 300)
	for id, n := range seen {
		require.Equal(t, 1, n, "row %d", id)
	}
}

func TestShardKeyMustBeAnIntegerColumn(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (id bigint, amount numeric, name text)`)
	ctx := context.Background()
	plan := func(query, key string) error {
		_, err := postgres.New().PlanShards(ctx, execute.ReadRequest{Config: map[string]any{"connection_url": d.url,
			"query": query, "shard": map[string]any{"key": key}}}, 4)
		return err
	}
	err := plan("SELECT * FROM t", "amount")
	require.ErrorIs(t, err, execute.ErrShardKey)
	require.ErrorContains(t, err, `source.config.shard.key "amount" is a numeric column`)
	err = plan("SELECT id FROM t", "name")
	require.ErrorIs(t, err, execute.ErrShardKey)
	require.ErrorContains(t, err, `"name" is not a column of the query (columns: id)`)

	p, err := postgres.New().PlanShards(ctx, execute.ReadRequest{Config: map[string]any{"connection_url": d.url,
		"query": "SELECT * FROM t", "shard": map[string]any{"key": "id"}}}, 4)
	require.NoError(t, err)
	require.Len(t, p, 1, "an empty table plans one shard")
}
