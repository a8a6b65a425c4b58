package suites

import (
	"slices"
	"testing"
)

func TestBurnMedians(t *testing.T) {
	rate := func(v ...float64) []burnResult {
		out := make([]burnResult, len(v))
		for i, x := range v {
			out[i] = burnResult{perSec: x, allocKB: x / 100}
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		rs        []burnResult
		rate, row float64 // the median runs/s, and the rate of the burn-down whose columns the row shows
	}{
		{"one", rate(3000), 3000, 3000},
		{"odd", rate(5000, 3000, 4000), 4000, 4000},
		{"even: the mean of the middle two, the lower one's columns", rate(4000, 1000, 3000, 2000), 2500, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := medianRate(tc.rs); got != tc.rate {
				t.Fatalf("medianRate = %v, want %v", got, tc.rate)
			}
			if got := medianBurn(tc.rs); got.perSec != tc.row || got.allocKB != tc.row/100 {
				t.Fatalf("medianBurn = %+v, want the burn-down of %v runs/s", got, tc.row)
			}
		})
	}
}

func TestBurnOrderRotates(t *testing.T) {
	want := [][]int{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}, {1, 2, 3}}
	for round, w := range want {
		if got := burnOrder(round); !slices.Equal(got, w) {
			t.Fatalf("round %d: burnOrder = %v, want %v", round, got, w)
		}
	}
}
