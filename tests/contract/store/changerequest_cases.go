package storecontract

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/domain/run"
)

func changeRequest(id string, created time.Time) *approvals.ChangeRequest {
	return &approvals.ChangeRequest{ID: id, Proposer: "otto", Name: "orders", Pool: "default", TriggerKind: "mcp",
		Request: `{"Config":"dmVyc2lvbjogMQ=="}`, Status: approvals.Proposed, CreatedAt: created,
		ExpiresAt: created.Add(approvals.TTL)}
}

func changeRequestCases() map[string]func(*testing.T, *env) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	return map[string]func(*testing.T, *env){
		"create, get and list newest first": func(t *testing.T, e *env) {
			for i, id := range []string{"cr-1", "cr-2", "cr-3"} {
				cr := changeRequest(id, t0.Add(time.Duration(i)*time.Minute))
				cr.RequestSealed = id == "cr-2"
				require.NoError(t, e.s.CreateChangeRequest(e.ctx, cr))
			}
			got, err := e.s.GetChangeRequest(e.ctx, "cr-2")
			require.NoError(t, err)
			require.Equal(t, "otto", got.Proposer)
			require.True(t, got.RequestSealed)
			require.Equal(t, t0.Add(time.Minute), got.CreatedAt)
			require.Equal(t, t0.Add(time.Minute+approvals.TTL), got.ExpiresAt)
			require.True(t, got.DecidedAt.IsZero())

			page, err := e.s.ListChangeRequests(e.ctx, approvals.Filter{Now: t0, Limit: 2})
			require.NoError(t, err)
			require.Equal(t, []string{"cr-3", "cr-2"}, crIDs(page))
			page, err = e.s.ListChangeRequests(e.ctx, approvals.Filter{Now: t0, Limit: 2, After: "cr-2"})
			require.NoError(t, err)
			require.Equal(t, []string{"cr-1"}, crIDs(page))

			_, err = e.s.GetChangeRequest(e.ctx, "missing")
			require.ErrorIs(t, err, run.ErrNotFound)
			require.Error(t, e.s.CreateChangeRequest(e.ctx, changeRequest("cr-1", t0)), "ids are unique")
		},
		"decisions are conditional and expiry is read from the clock": func(t *testing.T, e *env) {
			require.NoError(t, e.s.CreateChangeRequest(e.ctx, changeRequest("a", t0)))
			require.NoError(t, e.s.CreateChangeRequest(e.ctx, changeRequest("b", t0)))
			require.NoError(t, e.s.CreateChangeRequest(e.ctx, changeRequest("c", t0)))

			require.NoError(t, e.s.DecideChangeRequest(e.ctx, "a", approvals.Approved, "ada", t0.Add(time.Hour), "run-1"))
			got, err := e.s.GetChangeRequest(e.ctx, "a")
			require.NoError(t, err)
			require.Equal(t, approvals.Approved, got.Status)
			require.Equal(t, "ada", got.DecidedBy)
			require.Equal(t, "run-1", got.RunID)
			require.Equal(t, t0.Add(time.Hour), got.DecidedAt)
			require.ErrorIs(t, e.s.DecideChangeRequest(e.ctx, "a", approvals.Rejected, "bob", t0.Add(time.Hour), ""),
				approvals.ErrDecided, "decided once")

			late := t0.Add(approvals.TTL)
			require.ErrorIs(t, e.s.DecideChangeRequest(e.ctx, "b", approvals.Approved, "ada", late, "run-2"),
				approvals.ErrDecided, "an expired request cannot be approved")
			require.ErrorIs(t, e.s.DecideChangeRequest(e.ctx, "missing", approvals.Approved, "ada", t0, ""), run.ErrNotFound)

			expired, err := e.s.ListChangeRequests(e.ctx, approvals.Filter{Status: approvals.Expired, Now: late, Limit: 10})
			require.NoError(t, err)
			require.Equal(t, []string{"c", "b"}, crIDs(expired))
			proposed, err := e.s.ListChangeRequests(e.ctx, approvals.Filter{Status: approvals.Proposed, Now: t0, Limit: 10})
			require.NoError(t, err)
			require.Equal(t, []string{"c", "b"}, crIDs(proposed))
			approved, err := e.s.ListChangeRequests(e.ctx, approvals.Filter{Status: approvals.Approved, Now: t0, Limit: 10})
			require.NoError(t, err)
			require.Equal(t, []string{"a"}, crIDs(approved))
		},
		"two racing deciders: exactly one wins": func(t *testing.T, e *env) {
			require.NoError(t, e.s.CreateChangeRequest(e.ctx, changeRequest("race", t0)))
			// Two members when the history is shared; two goroutines on one store otherwise.
			stores := []approvals.Store{e.s, e.s}
			if e.h.Shared {
				stores[1] = e.open(t, store.Options{})
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, st := range stores {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = st.DecideChangeRequest(e.ctx, "race", approvals.Approved, "ada", t0.Add(time.Minute), "run-x")
				}()
			}
			wg.Wait()
			wins := 0
			for _, err := range errs {
				if err == nil {
					wins++
				} else {
					require.ErrorIs(t, err, approvals.ErrDecided)
				}
			}
			require.Equal(t, 1, wins)
		},
	}
}

func crIDs(list []*approvals.ChangeRequest) []string {
	out := make([]string, 0, len(list))
	for _, cr := range list {
		out = append(out, cr.ID)
	}
	return out
}
