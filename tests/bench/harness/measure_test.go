package harness_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

// The test binary itself is the child: with a pattern matching no test it exits 0 at once,
// and with an unknown flag it exits 2 after printing why.
func TestMeasure(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	require.NoError(t, err)
	s, err := harness.Measure(context.Background(), harness.Command{Argv: []string{self, "-test.run=^$"}, Dir: t.TempDir()})
	require.NoError(t, err)
	require.Positive(t, s.Wall)
	if runtime.GOOS == "linux" {
		require.Positive(t, s.PeakRSSKiB)
	}
}

func TestMeasureFailure(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	require.NoError(t, err)
	_, err = harness.Measure(context.Background(), harness.Command{Argv: []string{self, "-test.no-such-flag"}})
	require.ErrorContains(t, err, "exit status 2")
	require.ErrorContains(t, err, "no-such-flag", "the child's output is in the error")

	_, err = harness.Measure(context.Background(), harness.Command{})
	require.ErrorContains(t, err, "empty command")
}

// A child's peak is its own even when the benchmark process is large (it may host kfake
// or gofakes3 with every row in memory): Linux folds the parent's high-water mark into a
// vforked child's ru_maxrss at exec, which made every row show the parent's size.
func TestMeasurePeakIsTheChildsOwn(t *testing.T) {
	if runtime.GOOS != "linux" {
		return // the fold is Linux's; elsewhere ru_maxrss is what there is
	}
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	ballast := make([]byte, 256<<20)
	for i := 0; i < len(ballast); i += 4096 {
		ballast[i] = 1 // resident, so the parent's high-water mark is above 256 MiB
	}
	s, err := harness.Measure(context.Background(), harness.Command{Argv: []string{sleep, "0.2"}})
	runtime.KeepAlive(ballast)
	require.NoError(t, err)
	require.Positive(t, s.PeakRSSKiB)
	require.Less(t, s.PeakRSSKiB, int64(64<<10), "sleep's own peak, not the test process's")
}
