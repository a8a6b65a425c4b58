package bootstrap_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScheduleNextIsWired(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := run(t, nil, "schedule", "next", "30 1 * * *", "--timezone", "America/New_York",
		"--from", "2026-10-31T12:00:00Z", "--count", "2")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "2026-11-01T05:30:00Z  2026-11-01T01:30:00-04:00  EDT\n")
	require.Contains(t, stdout, "2026-11-02T06:30:00Z  2026-11-02T01:30:00-05:00  EST\n")
}
