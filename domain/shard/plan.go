package shard

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
)

// MaxCount is the largest shard count a config may ask for: beyond it the shard rows and
// their leases cost more than the parallelism gains.
const MaxCount = 4096

// ErrInvalidCount is wrapped by ValidateCount's error.
var ErrInvalidCount = errors.New("invalid shard count")

// ValidateCount checks shard.count. 1 means unsharded.
func ValidateCount(n int) error {
	if n < 1 || n > MaxCount {
		return fmt.Errorf("%w: shard.count must be between 1 and %d (1 runs unsharded), got %d", ErrInvalidCount, MaxCount, n)
	}
	return nil
}

// Range is one shard of a key-range plan: keys Lo..Hi, both inclusive. The shard whose
// Nulls is set also reads the rows whose key is NULL, so those rows are read exactly once.
type Range struct {
	Index  int
	Lo, Hi int64
	Nulls  bool
}

// Contains reports whether key k falls in the range.
func (r Range) Contains(k int64) bool { return r.Lo <= k && k <= r.Hi }

// PlanRanges splits [min, max] into up to n contiguous ranges that cover it exactly once,
// sizes differing by at most one. No range is ever empty, so n is capped at the number of
// keys (max-min+1). n < 1 plans one range. min > max (no keys) plans as PlanEmpty.
//
// The arithmetic is done in uint64 offsets from min: max-min overflows int64 when the keys
// span both signs, but never uint64.
func PlanRanges(min, max int64, n int) []Range {
	if min > max {
		return PlanEmpty()
	}
	if n < 1 {
		n = 1
	}
	span := uint64(max) - uint64(min) // number of keys - 1; the full int64 range is 2^64-1
	parts := uint64(n)
	if span < parts-1 {
		parts = span + 1
	}
	// keys = span+1 may not fit in uint64, so split span instead:
	// keys = q*parts + r + 1, hence base size q and (r+1) ranges one larger.
	base, extra := span/parts, span%parts+1
	if extra == parts {
		base, extra = base+1, 0
	}
	out := make([]Range, parts)
	off := uint64(0)
	for i := range out {
		size := base
		if uint64(i) < extra {
			size++
		}
		lo := uint64(min) + off
		out[i] = Range{Index: i, Lo: int64(lo), Hi: int64(lo + size - 1), Nulls: i == 0}
		off += size
	}
	return out
}

// PlanEmpty is the plan of a source with no keys (an empty table): one shard that
// excludes nothing, so rows that arrive before it runs are still read.
func PlanEmpty() []Range {
	return []Range{{Index: 0, Lo: math.MinInt64, Hi: math.MaxInt64, Nulls: true}}
}

// HashBucket returns the shard (0..n-1) of a file path: FNV-1a of the path modulo n. It
// is stable across processes and releases, so every member agrees which shard reads a
// file. n < 1 is treated as 1.
func HashBucket(path string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(path)) // a hash.Hash never returns an error
	return int(h.Sum64() % uint64(n))
}
