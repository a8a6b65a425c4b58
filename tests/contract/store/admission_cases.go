package storecontract

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
)

func serial(r *runs.Record) { r.Serial = true }

func admissionCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a serial run behind an active sibling is queued and promoted by its finish": func(t *testing.T, e *env) {
			first := e.claimOne(t, "inc", longTTL, serial)
			second := rec("inc", serial)
			res, err := e.s.Create(e.ctx, second, nil)
			require.NoError(t, err)
			require.Equal(t, "queued", res.Status)
			require.Equal(t, "queued", second.Status, "the record tells what was stored")
			third := rec("inc", serial)
			res, err = e.s.Create(e.ctx, third, nil)
			require.NoError(t, err)
			require.Equal(t, "queued", res.Status, "a queued sibling holds the key too")
			other := e.create(t, rec("other", serial))
			require.Equal(t, "pending", other.Status, "other pipeline keys are not held")
			tenanted := e.create(t, rec("inc", serial, func(r *runs.Record) { r.Tenant = "acme" }))
			require.Equal(t, "pending", tenanted.Status)

			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: first.ID, Epoch: first.Epoch},
				cluster.Outcome{Status: "completed"}, nil))
			require.Equal(t, "pending", e.get(t, second.ID).Status, "the oldest queued run is promoted")
			require.Equal(t, "queued", e.get(t, third.ID).Status, "only one")
		},
		"cancelling the active run promotes the next": func(t *testing.T, e *env) {
			first := e.create(t, rec("inc", serial))
			second := e.create(t, rec("inc", serial))
			require.Equal(t, "queued", second.Status)
			_, ok, err := e.s.CancelQueued(e.ctx, first.ID, nil)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, "pending", e.get(t, second.ID).Status)
		},
		"cancelling a queued run promotes nothing while the key is active": func(t *testing.T, e *env) {
			first := e.create(t, rec("inc", serial))
			second := e.create(t, rec("inc", serial))
			third := e.create(t, rec("inc", serial))
			_, ok, err := e.s.CancelQueued(e.ctx, second.ID, nil)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, "pending", e.get(t, first.ID).Status)
			require.Equal(t, "queued", e.get(t, third.ID).Status)
		},
		"promotion waits for the last active sibling": func(t *testing.T, e *env) {
			a := e.claimOne(t, "mixed", longTTL)
			b := e.claimOne(t, "mixed", longTTL)
			q := e.create(t, rec("mixed", serial))
			require.Equal(t, "queued", q.Status)
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: a.ID, Epoch: a.Epoch}, cluster.Outcome{Status: "failed", ErrorCode: "pipeline_error"}, nil))
			require.Equal(t, "queued", e.get(t, q.ID).Status)
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: b.ID, Epoch: b.Epoch}, cluster.Outcome{Status: "completed"}, nil))
			require.Equal(t, "pending", e.get(t, q.ID).Status)
		},
		"concurrent serial submits admit exactly one": func(t *testing.T, e *env) {
			const n = 8
			var wg sync.WaitGroup
			results := make([]runs.CreateResult, n)
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i], errs[i] = e.s.Create(e.ctx, rec("inc", serial), nil)
				}()
			}
			wg.Wait()
			pending := 0
			for i := range n {
				require.NoError(t, errs[i])
				require.True(t, results[i].Created)
				if results[i].Status == "pending" {
					pending++
				}
			}
			require.Equal(t, 1, pending)
			byStatus, err := e.s.CountByStatus(e.ctx)
			require.NoError(t, err)
			require.Equal(t, map[string]int{"pending": 1, "queued": n - 1}, byStatus)
		},
		"a queued run left with no active sibling is promoted by the reclaim sweep": func(t *testing.T, e *env) {
			q := e.create(t, rec("stranded", func(r *runs.Record) { r.Status = "queued" }))
			busy := e.claimOne(t, "busy", longTTL)
			waiting := e.create(t, rec("busy", serial))
			require.Equal(t, "queued", waiting.Status)
			_, err := e.s.Reclaim(e.ctx, nil)
			require.NoError(t, err)
			require.Equal(t, "pending", e.get(t, q.ID).Status)
			require.Equal(t, "queued", e.get(t, waiting.ID).Status, "a key with an active run keeps its queue")
			require.Equal(t, "running", e.get(t, busy.ID).Status)
		},
		"concurrent finishes of two active siblings promote the queued run": func(t *testing.T, e *env) {
			a := e.claimOne(t, "mixed", longTTL)
			b := e.claimOne(t, "mixed", longTTL)
			q := e.create(t, rec("mixed", serial))
			var wg sync.WaitGroup
			for _, c := range []cluster.Claimed{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					assertNoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch}, cluster.Outcome{Status: "completed"}, nil))
				}()
			}
			wg.Wait()
			require.Equal(t, "pending", e.get(t, q.ID).Status)
		},
	}
}
