package suites

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestShardCasesInterleaveMemberCounts(t *testing.T) {
	t.Parallel()
	require.Equal(t, []shardCase{{1, 1}, {4, 1}, {1, 2}, {4, 2}, {1, 3}, {4, 3}}, shardCases())
}

func TestShardPipelineAsksForShardsOnlyWhenSharded(t *testing.T) {
	t.Parallel()
	plain := shardPipeline("postgres://db", shardCase{Shards: 1, Members: 2})
	require.NotContains(t, plain, "shard")
	src := plain["pipeline"].(map[string]any)["source"].(map[string]any)["config"].(map[string]any)
	require.NotContains(t, src, "shard")

	sharded := shardPipeline("postgres://db", shardCase{Shards: 4, Members: 2})
	require.Equal(t, map[string]any{"count": 4}, sharded["shard"])
	pipe := sharded["pipeline"].(map[string]any)
	require.Equal(t, map[string]any{"key": "id"}, pipe["source"].(map[string]any)["config"].(map[string]any)["shard"])
	sink := pipe["sink"].(map[string]any)["config"].(map[string]any)
	require.Equal(t, "upsert", sink["write_mode"])
	require.Equal(t, []string{"id"}, sink["key"])
}

func TestMetricValueReadsAnUnlabelledCounter(t *testing.T) {
	t.Parallel()
	text := "# HELP sluice_serve_shards_claimed_total x\n# TYPE sluice_serve_shards_claimed_total counter\n" +
		"sluice_serve_shards_claimed_total_other 9\nsluice_serve_shards_claimed_total 3\n"
	n, err := metricValue(text, "sluice_serve_shards_claimed_total")
	require.NoError(t, err)
	require.Equal(t, 3.0, n)
	_, err = metricValue("", "sluice_serve_shards_claimed_total")
	require.Error(t, err)
}

func TestParseProcStatCountsFieldsAfterTheCommand(t *testing.T) {
	t.Parallel()
	// A command name with a space and a parenthesis must not shift the fields.
	p, ok := parseProcStat("2223 (post gres) x) S 1 2223 2223 0 -1 4194304 3946 12327 0 0 11 22 33 44 20 0 1 0 4508")
	require.True(t, ok)
	require.Equal(t, procTimes{comm: "post gres) x", ppid: 1, utime: 11, stime: 22, cutime: 33, cstime: 44}, p)
	_, ok = parseProcStat("12 (short) S 1 2")
	require.False(t, ok)
}

func TestMachineTicksLeaveOutIdleAndIOWait(t *testing.T) {
	t.Parallel()
	busy, all, ok := machineTicks("cpu  100 5 50 800 40 3 2 0 7 0")
	require.True(t, ok)
	require.Equal(t, uint64(1000), all)
	require.Equal(t, uint64(160), busy)
	_, _, ok = machineTicks("cpu0 1 2 3 4 5 6 7 8")
	require.False(t, ok)
}

func TestCPUCellsSplitTheBusyCores(t *testing.T) {
	t.Parallel()
	u := cpuUse{ok: true, busy: 0.9, members: 0.7, pg: 0.8, postgresOK: true}
	require.Equal(t, []string{"90%", "0.70", "0.80", "0.30"}, u.cells(2))
	u.postgresOK = false
	require.Equal(t, []string{"90%", "0.70", "n/a", "n/a"}, u.cells(2))
	require.Equal(t, []string{"n/a", "n/a", "n/a", "n/a"}, cpuUse{}.cells(2))
}

func TestShardRowsCompareWithTheFastestUnshardedRun(t *testing.T) {
	t.Parallel()
	cases := []shardCase{{1, 1}, {4, 1}, {1, 2}, {4, 2}}
	results := []shardResult{
		{Wall: 5 * time.Second, Rows: 1000, PerOwner: []int{1}},
		{Wall: 4 * time.Second, Rows: 1000, PerOwner: []int{4}},
		{Wall: 4 * time.Second, Rows: 1000, PerOwner: []int{1}}, // the fastest unsharded: 250 rows/s
		{Wall: 2 * time.Second, Rows: 1000, PerOwner: []int{2, 2}},
	}
	rows := shardRows(cases, results, 2)
	require.Equal(t, []string{"unsharded", "1", "1", "5.00 s", "200", "0.80×", "n/a", "n/a", "n/a", "n/a"}, rows[0])
	require.Equal(t, "1.00×", rows[1][5])
	require.Equal(t, "1.00×", rows[2][5])
	require.Equal(t, []string{"shard: {count: 4}", "2", "2 + 2", "2.00 s", "500", "2.00×"}, rows[3][:6])
}
