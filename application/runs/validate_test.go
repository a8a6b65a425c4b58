package runs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/pool"
)

func TestValidateAnswersLikeSubmitAndStoresNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()

	warnings, err := h.svc.Validate(ctx, viewer, []byte(baseConfig), nil, "")
	require.NoError(t, err, "a viewer may validate: nothing is created")
	require.NotNil(t, warnings)
	n, err := h.store.CountQueued(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "validation stores no run")

	bad := "version: 1\nname: bad\npipeline:\n  source: {type: nowhere}\n  sink: {type: nowhere}\n"
	_, verr := h.svc.Validate(ctx, operator, []byte(bad), nil, "")
	_, serr := h.svc.Submit(ctx, req(operator, bad))
	require.ErrorIs(t, verr, pipeline.ErrInvalidConfig)
	require.Equal(t, serr.Error(), verr.Error(), "the same answer as a submission")

	_, err = h.svc.Validate(ctx, operator, []byte(baseConfig), nil, "gpu")
	require.ErrorIs(t, err, pool.ErrUnserved, "pool admission is checked as at submit")
}

func TestValidateRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	_, err := h.svc.Validate(ctx, runs.Principal{Name: "nobody"}, []byte(baseConfig), nil, "")
	require.ErrorIs(t, err, runs.ErrForbidden)
	_, err = h.svc.Validate(ctx, operator, nil, nil, "")
	require.ErrorIs(t, err, runs.ErrInvalidRequest)
	require.ErrorContains(t, err, "config")
}
