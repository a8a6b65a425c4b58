package harness_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

func sampleReport() harness.Report {
	return harness.Report{
		Suite:   "demo",
		Rows:    1_000_000,
		Repeat:  1,
		Machine: harness.Machine{CPUs: 2, CPUModel: "Test CPU", OS: "linux", Arch: "amd64", GoVersion: "go1.26.8"},
		Command: "go run ./tests/bench/cmd/sluice-bench --markdown",
		Notes:   []string{"Input: in.csv."},
		Results: []harness.Result{
			{ID: "fast", Label: "fast", Rows: 1_000_000, Wall: 2 * time.Second, PeakRSSKiB: 30 * 1024},
			{ID: "broken", Label: "broken", Err: errors.New("exit status 1\nboom")},
			{ID: "base", Label: "base", Baseline: true, Rows: 1_000_000, Wall: 4 * time.Second, PeakRSSKiB: 15*1024 + 512},
		},
	}
}

func TestReportMarkdown(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	require.NoError(t, sampleReport().Write(&b, true))
	require.Equal(t, "Suite `demo`, 1,000,000 rows — 2 CPUs (Test CPU), linux/amd64, go1.26.8  \n"+
		"Command: `go run ./tests/bench/cmd/sluice-bench --markdown`\n\n"+
		"| pipeline | rows | seconds | rows/s | peak RSS MiB | vs baseline (%) |\n"+
		"|---|--:|--:|--:|--:|--:|\n"+
		"| fast | 1,000,000 | 2.00 | 500,000 | 30.0 | 200 |\n"+
		"| broken | — | — | — | — | FAILED |\n"+
		"| base | 1,000,000 | 4.00 | 250,000 | 15.5 | 100 |\n"+
		"\n- Input: in.csv.\n- broken FAILED: exit status 1\n  boom\n", b.String())
}

func TestReportText(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	r.Repeat = 3
	var b strings.Builder
	require.NoError(t, r.Write(&b, false))
	out := b.String()
	require.Contains(t, out, "suite:   demo, 1,000,000 rows, fastest of 3 runs each\n")
	require.Contains(t, out, "machine: 2 CPUs (Test CPU), linux/amd64, go1.26.8\n")
	require.Contains(t, out, "command: go run ./tests/bench/cmd/sluice-bench --markdown\n")
	lines := strings.Split(out, "\n")
	var table []string
	for _, l := range lines {
		if strings.HasSuffix(l, "vs baseline (%)") || strings.HasSuffix(l, "200") || strings.HasSuffix(l, "100") {
			table = append(table, l)
		}
	}
	require.Len(t, table, 3)
	require.Equal(t, len(table[0]), len(table[1]), "columns are aligned")
	require.Equal(t, len(table[0]), len(table[2]), "columns are aligned")
	require.Contains(t, table[1], " fast  1,000,000     2.00  500,000          30.0              200")
	require.Contains(t, out, "broken FAILED: exit status 1")
}

func TestReportWithoutBaseline(t *testing.T) {
	t.Parallel()
	r := sampleReport()
	r.Results = r.Results[:1]
	r.Results[0].PeakRSSKiB = -1
	var b strings.Builder
	require.NoError(t, r.Write(&b, true))
	require.Contains(t, b.String(), "| fast | 1,000,000 | 2.00 | 500,000 | — | — |\n")
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234", 10_000_000: "10,000,000"} {
		require.Equal(t, want, harness.Thousands(n))
	}
}

func TestMachineString(t *testing.T) {
	t.Parallel()
	m := harness.Machine{CPUs: 4, OS: "linux", Arch: "arm64", GoVersion: "go1.26.8"}
	require.Equal(t, "4 CPUs, linux/arm64, go1.26.8", m.String())
}

func TestReportTable(t *testing.T) {
	t.Parallel()
	r := harness.Report{
		Suite:   "cluster",
		Machine: harness.Machine{CPUs: 2, CPUModel: "Test CPU", OS: "linux", Arch: "amd64", GoVersion: "go1.26.8"},
		Command: "go run ./tests/bench/cmd/sluice-bench --suite cluster --markdown",
		Notes:   []string{"10,000 runs."},
		Table:   &harness.Table{Columns: []string{"measure", "value"}, Rows: [][]string{{"pickup p50", "4 ms"}}},
	}
	var b strings.Builder
	require.NoError(t, r.Write(&b, true))
	require.Equal(t, "Suite `cluster` — 2 CPUs (Test CPU), linux/amd64, go1.26.8  \n"+
		"Command: `go run ./tests/bench/cmd/sluice-bench --suite cluster --markdown`\n\n"+
		"| measure | value |\n|---|--:|\n| pickup p50 | 4 ms |\n\n- 10,000 runs.\n", b.String())
	b.Reset()
	require.NoError(t, r.Write(&b, false))
	require.Contains(t, b.String(), "suite:   cluster\n")
	require.Contains(t, b.String(), "pickup p50  4 ms")
	require.NotContains(t, b.String(), "rows/s", "a table suite prints its own columns only")
}
