package harness_test

import (
	"context"
	"os"
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
