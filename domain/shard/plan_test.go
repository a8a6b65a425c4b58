package shard_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/shard"
)

func TestValidateCount(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 64, 4096} {
		require.NoError(t, shard.ValidateCount(n), n)
	}
	for _, n := range []int{0, -1, 4097, math.MaxInt} {
		err := shard.ValidateCount(n)
		require.ErrorIs(t, err, shard.ErrInvalidCount)
		require.ErrorContains(t, err, "shard.count must be between 1 and 4096")
		require.ErrorContains(t, err, "got "+strconv.Itoa(n))
	}
}

func TestPlanRanges(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		min, max int64
		n        int
		want     []shard.Range
	}{
		"even": {1, 100, 4, []shard.Range{
			{0, 1, 25, true}, {1, 26, 50, false}, {2, 51, 75, false}, {3, 76, 100, false},
		}},
		"remainder goes to the first ranges": {0, 9, 3, []shard.Range{
			{0, 0, 3, true}, {1, 4, 6, false}, {2, 7, 9, false},
		}},
		"one key": {7, 7, 8, []shard.Range{{0, 7, 7, true}}},
		"count above keys is capped": {-2, 2, 16, []shard.Range{
			{0, -2, -2, true}, {1, -1, -1, false}, {2, 0, 0, false}, {3, 1, 1, false}, {4, 2, 2, false},
		}},
		"one shard":      {5, 500, 1, []shard.Range{{0, 5, 500, true}}},
		"n below one":    {5, 500, 0, []shard.Range{{0, 5, 500, true}}},
		"min above max":  {10, 1, 4, shard.PlanEmpty()},
		"crossing zero":  {-5, 4, 2, []shard.Range{{0, -5, -1, true}, {1, 0, 4, false}}},
		"top edge":       {math.MaxInt64 - 2, math.MaxInt64, 2, []shard.Range{{0, math.MaxInt64 - 2, math.MaxInt64 - 1, true}, {1, math.MaxInt64, math.MaxInt64, false}}},
		"bottom edge":    {math.MinInt64, math.MinInt64 + 1, 5, []shard.Range{{0, math.MinInt64, math.MinInt64, true}, {1, math.MinInt64 + 1, math.MinInt64 + 1, false}}},
		"full int64 / 2": {math.MinInt64, math.MaxInt64, 2, []shard.Range{{0, math.MinInt64, -1, true}, {1, 0, math.MaxInt64, false}}},
		"full int64 / 1": {math.MinInt64, math.MaxInt64, 1, []shard.Range{{0, math.MinInt64, math.MaxInt64, true}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := shard.PlanRanges(tc.min, tc.max, tc.n)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestPlanEmpty(t *testing.T) {
	t.Parallel()
	p := shard.PlanEmpty()
	require.Len(t, p, 1)
	require.True(t, p[0].Nulls)
	require.True(t, p[0].Contains(math.MinInt64))
	require.True(t, p[0].Contains(0))
	require.True(t, p[0].Contains(math.MaxInt64))
}

// TestPlanRangesProperties checks the plan's promises over many random inputs, skewed
// towards the int64 edges and tiny spans where off-by-one and overflow bugs live.
func TestPlanRangesProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	edges := []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 - 1, math.MaxInt64}
	pick := func() int64 {
		switch rng.IntN(4) {
		case 0:
			return edges[rng.IntN(len(edges))]
		case 1:
			return rng.Int64N(100) - 50
		default:
			return int64(rng.Uint64())
		}
	}
	for i := range 3000 {
		lo, hi := pick(), pick()
		if rng.IntN(3) == 0 {
			hi = lo + rng.Int64N(10) // tiny spans (may wrap to below lo: then it plans empty)
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		n := 1 + rng.IntN(shard.MaxCount)
		plan := shard.PlanRanges(lo, hi, n)
		checkPlan(t, i, lo, hi, n, plan)
	}
}

// checkPlan uses plain comparisons, not require: it runs millions of times.
func checkPlan(t *testing.T, i int, lo, hi int64, n int, plan []shard.Range) {
	t.Helper()
	keys := uint64(hi) - uint64(lo) // keys-1
	wantParts := uint64(n)
	if keys < wantParts-1 {
		wantParts = keys + 1
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("case %d [%d, %d] n=%d: "+format, append([]any{i, lo, hi, n}, args...)...)
	}
	if uint64(len(plan)) != wantParts {
		fail("%d ranges, want %d", len(plan), wantParts)
	}
	if plan[0].Lo != lo || plan[len(plan)-1].Hi != hi {
		fail("plan covers [%d, %d]", plan[0].Lo, plan[len(plan)-1].Hi)
	}
	var minSize, maxSize uint64 = math.MaxUint64, 0
	for j, r := range plan {
		if r.Index != j || r.Nulls != (j == 0) {
			fail("range %d is %+v: indexes run 0.. and only range 0 reads NULL keys", j, r)
		}
		if r.Lo > r.Hi {
			fail("range %d is empty: %+v", j, r)
		}
		if j > 0 && (plan[j-1].Hi >= r.Lo || uint64(plan[j-1].Hi)+1 != uint64(r.Lo)) {
			fail("gap or overlap between %+v and %+v", plan[j-1], r)
		}
		size := uint64(r.Hi) - uint64(r.Lo) // size-1
		minSize, maxSize = min(minSize, size), max(maxSize, size)
	}
	if maxSize-minSize > 1 {
		fail("sizes differ by %d", maxSize-minSize)
	}
}

func TestHashBucket(t *testing.T) {
	t.Parallel()
	// Pinned values: a change of hash would move files between shards across a rolling
	// upgrade, so it must show up here.
	require.Equal(t, 0, shard.HashBucket("", 1))
	require.Equal(t, 0, shard.HashBucket("data/a.csv", 0))
	require.Equal(t, 0, shard.HashBucket("data/a.csv", -3))
	pinned := map[string]int{"data/a.csv": 3, "data/b.csv": 6, "s3/2025/01/part-0001.json": 5}
	for p, b := range pinned {
		require.Equal(t, b, shard.HashBucket(p, 8), p)
	}
	require.Equal(t, int(uint64(0xcbf29ce484222325)%7), shard.HashBucket("", 7), "FNV-1a offset basis for the empty path")
	require.Equal(t, int(uint64(0xaf63dc4c8601ec8c)%1000), shard.HashBucket("a", 1000), "FNV-1a of \"a\"")

	// Spread: 4096 paths over 8 buckets land roughly evenly.
	var counts [8]int
	for i := range 4096 {
		counts[shard.HashBucket("dir/file-"+strconv.Itoa(i)+".csv", 8)]++
	}
	for b, c := range counts {
		require.InDelta(t, 512, c, 120, "bucket %d", b)
	}
}
