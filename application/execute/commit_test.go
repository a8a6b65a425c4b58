package execute_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
)

// A sink whose commit a newer writer refused (an object store's writer marker taken over)
// fails the run lease_lost, as a fenced sink does, not as a pipeline error.
func TestCommitRefusedByANewerWriterIsLeaseLost(t *testing.T) {
	t.Parallel()
	snk := &fakeSink{durability: execute.AtEnd, commitErr: fmt.Errorf("another writer took over: %w", run.ErrLeaseLost)}
	_, err := setup(&fakeSource{pages: 2, rowsPerPage: 2}, snk).Run(context.Background(), execute.Job{Config: config(false)})
	var f *execute.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, run.CodeLeaseLost, f.Code)
	require.ErrorIs(t, err, run.ErrLeaseLost)
}
