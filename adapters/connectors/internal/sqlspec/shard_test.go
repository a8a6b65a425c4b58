package sqlspec_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/shard"
)

func TestHasTopLevelLimit(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"SELECT * FROM t":                                        false,
		"SELECT * FROM t LIMIT 10":                               true,
		"select * from t order by id limit 5 offset 2":           true,
		"SELECT * FROM t FETCH FIRST 3 ROWS ONLY":                true,
		"SELECT * FROM (SELECT * FROM t LIMIT 10) s":             false,
		"SELECT * FROM t WHERE id IN (SELECT id FROM u LIMIT 1)": false,
		"SELECT 'LIMIT 1' AS x FROM t":                           false,
		`SELECT "limit" FROM t`:                                  false,
		"SELECT * FROM t -- LIMIT 1\n":                           false,
		"SELECT * FROM t /* LIMIT 1 */":                          false,
		"SELECT limited FROM t":                                  false,
	}
	for q, want := range cases {
		require.Equal(t, want, sqlspec.HasTopLevelLimit(q), q)
	}
}

func TestNarrow(t *testing.T) {
	t.Parallel()
	quote := func(s string) string { return `"` + s + `"` }
	c := map[string]any{"shard": map[string]any{"key": "id"}}
	all := pipeline.NewStatement("SELECT * FROM t")
	q, err := sqlspec.Narrow(all, c, nil, quote)
	require.NoError(t, err)
	require.Equal(t, all, q, "no shard, no change")

	q, err = sqlspec.Narrow(all, c, &execute.ShardSlice{Index: 0, Count: 2, Range: &shard.Range{Lo: -5, Hi: 9, Nulls: true}}, quote)
	require.NoError(t, err)
	require.Equal(t, "SELECT * FROM (\nSELECT * FROM t\n) AS q WHERE (q.\"id\" BETWEEN -5 AND 9 OR q.\"id\" IS NULL)", sqlspec.Text(q))
	q, err = sqlspec.Narrow(all, c, &execute.ShardSlice{Index: 1, Count: 2, Range: &shard.Range{Lo: 10, Hi: 20}}, quote)
	require.NoError(t, err)
	require.Equal(t, "SELECT * FROM (\nSELECT * FROM t\n) AS q WHERE q.\"id\" BETWEEN 10 AND 20", sqlspec.Text(q))

	// The query's bind parameters keep their values and order inside the wrapper.
	bound := pipeline.Statement{Text: []string{"SELECT * FROM t WHERE a = ", " AND b = ", ""}, Args: []any{"x", int64(2)}}
	q, err = sqlspec.Narrow(bound, c, &execute.ShardSlice{Index: 1, Count: 2, Range: &shard.Range{Lo: 10, Hi: 20}}, quote)
	require.NoError(t, err)
	require.Equal(t, []any{"x", int64(2)}, q.Args)
	require.Equal(t, "SELECT * FROM (\nSELECT * FROM t WHERE a = ? AND b = ?\n) AS q WHERE q.\"id\" BETWEEN 10 AND 20", sqlspec.Text(q))

	_, err = sqlspec.Narrow(pipeline.NewStatement("SELECT 1"), c, &execute.ShardSlice{Index: 1, Count: 2}, quote)
	require.ErrorContains(t, err, "split by key ranges")
	_, err = sqlspec.Narrow(pipeline.NewStatement("SELECT 1"), map[string]any{}, &execute.ShardSlice{Range: &shard.Range{}}, quote)
	require.ErrorContains(t, err, "shard.key is not set")
}

func TestShardRead(t *testing.T) {
	t.Parallel()
	url, key, q, err := sqlspec.ShardRead(map[string]any{"connection_url": "x", "query": "SELECT id FROM t;", "shard": map[string]any{"key": "id"}})
	require.NoError(t, err)
	require.Equal(t, []string{"x", "id", "SELECT id FROM t"}, []string{url, key, sqlspec.Text(q)})

	refused := map[string]map[string]any{
		"source.config.shard.key is not set": {"query": "SELECT 1"},
		`"shard.key" must name`:              {"query": "SELECT 1", "shard": map[string]any{"key": ""}},
		`"shard.count" is unknown`:           {"query": "SELECT 1", "shard": map[string]any{"key": "id", "count": 2}},
		`"shard" must be a map`:              {"query": "SELECT 1", "shard": "id"},
	}
	for want, c := range refused {
		_, _, _, err := sqlspec.ShardRead(c)
		require.ErrorContains(t, err, want)
		require.True(t, errors.Is(err, execute.ErrShardKey), want)
	}
	_, _, _, err = sqlspec.ShardRead(map[string]any{"query": "SELECT id FROM t LIMIT 5", "shard": map[string]any{"key": "id"}})
	require.ErrorContains(t, err, "top-level LIMIT cannot be sharded")
}

func TestKeyPlan(t *testing.T) {
	t.Parallel()
	plan := sqlspec.KeyPlan(1, 10, true, 4)
	require.Len(t, plan, 4)
	var sum int64
	for i, s := range plan {
		require.Equal(t, i, s.Index)
		require.Equal(t, 4, s.Count)
		require.Equal(t, s.Range.Hi-s.Range.Lo+1, s.Weight)
		sum += s.Weight
	}
	require.Equal(t, int64(10), sum, "the ranges cover [MIN, MAX] once")
	require.True(t, plan[0].Range.Nulls)

	empty := sqlspec.KeyPlan(0, 0, false, 8)
	require.Len(t, empty, 1, "no key at all plans one shard")
	require.Equal(t, shard.PlanEmpty()[0], *empty[0].Range)
	require.Equal(t, int64(math.MaxInt64), empty[0].Weight)

	few := sqlspec.KeyPlan(5, 6, true, 8)
	require.Len(t, few, 2, "never more shards than keys")
}
