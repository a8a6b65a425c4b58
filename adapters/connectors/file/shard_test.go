package file_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/file"
	"github.com/sluicehq/sluice/application/execute"
)

func TestGlobShardsReadEachFileOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 20 {
		write(t, dir, fmt.Sprintf("part-%02d.csv", i), fmt.Sprintf("id,v\n%d,a\n%d,b\n", 2*i, 2*i+1))
	}
	c := file.New()
	req := execute.ReadRequest{BaseDir: dir, Config: map[string]any{"path": "part-*.csv", "header": true, "delimiter": ","}}
	plan, err := c.PlanShards(context.Background(), req, 4)
	require.NoError(t, err)
	require.Len(t, plan, 4)
	var weight int64
	seen := map[string]int{}
	for i := range plan {
		require.Equal(t, execute.ShardSlice{Index: i, Count: 4, Weight: plan[i].Weight}, plan[i], "hash buckets carry no key range")
		weight += plan[i].Weight
		r := req
		r.Shard = &plan[i]
		pages, err := readPages(t, c, r)
		require.NoError(t, err)
		for _, row := range allRows(pages) {
			seen[fmt.Sprint(row[0])]++
		}
	}
	require.Positive(t, weight)
	require.Len(t, seen, 40, "every row of every file is read")
	for id, n := range seen {
		require.Equal(t, 1, n, "row %s", id)
	}
}

func TestOneFileIsNotSplit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "one.csv", "id\n1\n")
	c := file.New()
	for _, p := range []string{"one.csv", "https://example.com/data.csv"} {
		plan, err := c.PlanShards(context.Background(), execute.ReadRequest{BaseDir: dir, Config: map[string]any{"path": p}}, 4)
		require.NoError(t, err)
		require.Empty(t, plan, "%s runs whole", p)
	}
}
