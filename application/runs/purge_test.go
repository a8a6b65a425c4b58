package runs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

func TestPurgeBatchIsCappedAtTenThousandRuns(t *testing.T) {
	t.Parallel()
	require.Equal(t, runs.MaxPurgeBatch, runs.PurgeRequest{}.Batch(), "0 means the cap")
	require.Equal(t, 10_000, runs.PurgeRequest{BatchSize: 50_000}.Batch(), "no transaction deletes more than 10,000 runs")
	require.Equal(t, runs.MaxPurgeBatch, runs.PurgeRequest{BatchSize: -1}.Batch())
	require.Equal(t, 7, runs.PurgeRequest{BatchSize: 7}.Batch())
}
