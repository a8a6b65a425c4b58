package storecontract

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
)

// followCases hold MarkFollowed: the mark that makes a run's end announced to the
// followers on every member (the PostgreSQL notification itself is tested beside the
// store's other notifications).
func followCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a follow marks a run that has not ended, once, and the mark outlives its end": func(t *testing.T, e *env) {
			pending := e.create(t, rec("p", func(r *runs.Record) { r.Pool = "elsewhere" })) // not claimed below
			require.False(t, e.get(t, pending.ID).Followed, "a new run is followed by nobody")
			require.NoError(t, e.s.MarkFollowed(e.ctx, pending.ID))
			require.True(t, e.get(t, pending.ID).Followed)
			require.NoError(t, e.s.MarkFollowed(e.ctx, pending.ID), "a second follower changes nothing")
			require.True(t, e.get(t, pending.ID).Followed)

			followed := e.claimOne(t, "followed", longTTL)
			quiet := e.claimOne(t, "quiet", longTTL)
			require.NoError(t, e.s.MarkFollowed(e.ctx, followed.ID))
			errs := e.s.FinishBatch(e.ctx, e.owner.InstanceID, []cluster.Finishing{
				{Ref: cluster.Ref{ID: followed.ID, Epoch: followed.Epoch}, Outcome: cluster.Outcome{Status: "completed", Name: "followed"}},
				{Ref: cluster.Ref{ID: quiet.ID, Epoch: quiet.Epoch}, Outcome: cluster.Outcome{Status: "completed", Name: "quiet"}},
			}, nil)
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			require.True(t, e.get(t, followed.ID).Followed, "the finish keeps the mark it read")
			require.False(t, e.get(t, quiet.ID).Followed, "marking one run marks no other")
		},
		"a run that ended, or none, is not marked and is no error": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL)
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch},
				cluster.Outcome{Status: "failed", ErrorCode: "pipeline_error"}, nil))
			require.NoError(t, e.s.MarkFollowed(e.ctx, c.ID))
			require.False(t, e.get(t, c.ID).Followed, "its end was announced or not already; a mark now is too late to matter")
			require.NoError(t, e.s.MarkFollowed(e.ctx, "0190c3a0-0000-7000-8000-000000000000"))
		},
	}
}
