package harness_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

func okRun(context.Context, *harness.Env) (harness.Sample, error) { return harness.Sample{}, nil }
func okCount(context.Context, *harness.Env) (int64, error)        { return 0, nil }

func tcase(id string, baseline bool) harness.Case {
	return harness.Case{ID: id, Label: id, Baseline: baseline, Run: okRun, Count: okCount}
}

func demoSuite() harness.Suite {
	return harness.Suite{Name: "demo", Description: "a demo", Cases: []harness.Case{
		tcase("fast", false), tcase("slow", false), tcase("base", true),
	}}
}

func registry(t *testing.T) *harness.Registry {
	t.Helper()
	reg, err := harness.NewRegistry(demoSuite())
	require.NoError(t, err)
	return reg
}

func TestRegistryLookup(t *testing.T) {
	t.Parallel()
	other := harness.Suite{Name: "other", Cases: []harness.Case{tcase("x", false)}}
	reg, err := harness.NewRegistry(demoSuite(), other)
	require.NoError(t, err)
	require.Equal(t, []string{"demo", "other"}, reg.Names())
	s, err := reg.Lookup("other")
	require.NoError(t, err)
	require.Equal(t, "other", s.Name)
	_, err = reg.Lookup("serve")
	require.ErrorContains(t, err, `--suite: unknown suite "serve" (known: demo, other)`)
}

func TestNewRegistryRefuses(t *testing.T) {
	t.Parallel()
	noRun := tcase("x", false)
	noRun.Run = nil
	noCount := tcase("x", false)
	noCount.Count = nil
	tests := []struct {
		name   string
		suites []harness.Suite
		want   string
	}{
		{"duplicate suite", []harness.Suite{demoSuite(), demoSuite()}, "registered twice"},
		{"empty name", []harness.Suite{{Cases: []harness.Case{tcase("x", false)}}}, "suite name"},
		{"name with space", []harness.Suite{{Name: "a b", Cases: []harness.Case{tcase("x", false)}}}, "suite name"},
		{"no cases", []harness.Suite{{Name: "a"}}, "no cases"},
		{"duplicate case", []harness.Suite{{Name: "a", Cases: []harness.Case{tcase("x", false), tcase("x", false)}}}, "used twice"},
		{"case id with comma", []harness.Suite{{Name: "a", Cases: []harness.Case{tcase("x,y", false)}}}, "case ID"},
		{"empty case id", []harness.Suite{{Name: "a", Cases: []harness.Case{tcase("", false)}}}, "case ID"},
		{"no run", []harness.Suite{{Name: "a", Cases: []harness.Case{noRun}}}, "Run and Count"},
		{"no count", []harness.Suite{{Name: "a", Cases: []harness.Case{noCount}}}, "Run and Count"},
		{"two baselines", []harness.Suite{{Name: "a", Cases: []harness.Case{tcase("x", true), tcase("y", true)}}}, "2 baseline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := harness.NewRegistry(tt.suites...)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	ids := func(cs []harness.Case) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	all, err := harness.Select(demoSuite(), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"fast", "slow", "base"}, ids(all))
	// The suite's order wins over the order of --only.
	some, err := harness.Select(demoSuite(), []string{"base", "fast"})
	require.NoError(t, err)
	require.Equal(t, []string{"fast", "base"}, ids(some))
	_, err = harness.Select(demoSuite(), []string{"fast", "nope"})
	require.ErrorContains(t, err, `--only: suite "demo" has no case "nope" (cases: fast, slow, base)`)
}

func TestTableSuites(t *testing.T) {
	t.Parallel()
	table := func(context.Context, *harness.Env) (harness.Table, error) { return harness.Table{}, nil }
	_, err := harness.NewRegistry(harness.Suite{Name: "t", Table: table})
	require.NoError(t, err, "a table suite needs no cases")
	_, err = harness.NewRegistry(harness.Suite{Name: "t", Table: table, Cases: []harness.Case{tcase("x", false)}})
	require.ErrorContains(t, err, "both a Table and Cases")
}
