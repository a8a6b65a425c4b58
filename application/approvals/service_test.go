package approvals_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/tests/historytest"
)

var (
	otto   = runs.Principal{Name: "otto", Role: runs.Operator}
	ada    = runs.Principal{Name: "ada", Role: runs.Admin}
	vera   = runs.Principal{Name: "vera", Role: runs.Viewer}
	tenant = runs.Principal{Name: "acme-bot", Role: runs.Operator, Tenant: "acme"}
)

type submitter struct {
	mu   sync.Mutex
	reqs []runs.SubmitRequest
	err  error
}

func (s *submitter) Submit(_ context.Context, req runs.SubmitRequest) (runs.SubmitResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return runs.SubmitResult{}, s.err
	}
	s.reqs = append(s.reqs, req)
	return runs.SubmitResult{RunID: "run-" + req.RunKey, Status: "pending"}, nil
}

// xorSealer is a stand-in vault that binds owner and purpose.
type xorSealer struct{}

func (xorSealer) Seal(_ context.Context, owner string, purpose runs.Purpose, p []byte) ([]byte, error) {
	return append([]byte(owner+"|"+string(purpose)+"|"), p...), nil
}

func (xorSealer) Open(_ context.Context, owner string, purpose runs.Purpose, c []byte) ([]byte, error) {
	prefix := owner + "|" + string(purpose) + "|"
	if len(c) < len(prefix) || string(c[:len(prefix)]) != prefix {
		return nil, runs.ErrVaultTampered
	}
	return c[len(prefix):], nil
}
func (xorSealer) KeyID() string  { return "k1" }
func (xorSealer) FormatMax() int { return 1 }

type harness struct {
	svc   *approvals.Service
	store *store.Store
	runs  *submitter
	now   time.Time
}

func newHarness(t *testing.T, sealer runs.Sealer) *harness {
	t.Helper()
	h := &harness{store: historytest.Open(t), runs: &submitter{},
		now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	n := 0
	h.svc = approvals.New(approvals.Deps{Store: h.store, Runs: h.runs, Sealer: sealer,
		Clock: func() time.Time { return h.now },
		NewID: func() (string, error) { n++; return fmt.Sprintf("cr-%d", n), nil }})
	return h
}

func (h *harness) propose(t *testing.T, p runs.Principal) string {
	t.Helper()
	id, err := h.svc.Propose(context.Background(), runs.SubmitRequest{Principal: p, TriggerKind: "api",
		Config: []byte("version: 1"), Params: map[string]string{"region": "eu"}, Propose: true}, "orders", "gpu")
	require.NoError(t, err)
	return id
}

func TestApprovalSubmitsTheProposedRequest(t *testing.T) {
	t.Parallel()
	for _, sealed := range []bool{false, true} {
		var sealer runs.Sealer
		if sealed {
			sealer = xorSealer{}
		}
		h := newHarness(t, sealer)
		id := h.propose(t, otto)
		stored, err := h.store.GetChangeRequest(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, sealed, stored.RequestSealed)
		if sealed {
			raw, err := base64.StdEncoding.DecodeString(stored.Request)
			require.NoError(t, err)
			require.NotContains(t, stored.Request, "version: 1")
			require.Contains(t, string(raw), id+"|change_request|", "bound to the change request id")
		}
		cr, err := h.svc.Approve(context.Background(), ada, id)
		require.NoError(t, err)
		require.Equal(t, approvals.Approved, cr.Status)
		require.Equal(t, "ada", cr.DecidedBy)
		require.Len(t, h.runs.reqs, 1)
		req := h.runs.reqs[0]
		require.Equal(t, "approval", req.TriggerKind)
		require.Equal(t, "gpu", req.Pool, "the pool it was proposed with")
		require.Equal(t, ada, req.Principal)
		require.Equal(t, "change-request:"+id, req.RunKey)
		require.Equal(t, []byte("version: 1"), req.Config)
		require.Equal(t, map[string]string{"region": "eu"}, req.Params)
		require.False(t, req.Propose)
		require.Equal(t, "run-change-request:"+id, cr.RunID)
	}
}

func TestDecisionRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t, nil)
	id := h.propose(t, otto)

	_, err := h.svc.Approve(ctx, otto, id)
	require.ErrorIs(t, err, runs.ErrForbidden, "the proposer may not approve")
	require.ErrorContains(t, err, "another operator or admin")
	_, err = h.svc.Approve(ctx, vera, id)
	require.ErrorIs(t, err, runs.ErrForbidden, "a viewer may not decide")
	_, err = h.svc.Reject(ctx, tenant, id)
	require.ErrorIs(t, err, runs.ErrForbidden, "tenant principals may not decide")
	_, err = h.svc.Approve(ctx, ada, "missing")
	require.ErrorIs(t, err, run.ErrNotFound)

	h.runs.err = runs.ErrQueueFull
	_, err = h.svc.Approve(ctx, ada, id)
	require.ErrorIs(t, err, runs.ErrQueueFull)
	cr, err := h.svc.Get(ctx, vera, id)
	require.NoError(t, err)
	require.Equal(t, approvals.Proposed, cr.Status, "a failed submission leaves it proposed")
	h.runs.err = nil

	cr, err = h.svc.Reject(ctx, ada, id)
	require.NoError(t, err)
	require.Equal(t, approvals.Rejected, cr.Status)
	_, err = h.svc.Approve(ctx, ada, id)
	require.ErrorIs(t, err, approvals.ErrDecided)
	require.ErrorIs(t, err, run.ErrConflict)
	require.Empty(t, h.runs.reqs, "nothing ran")

	old := h.propose(t, otto)
	h.now = h.now.Add(approvals.TTL)
	cr, err = h.svc.Get(ctx, vera, old)
	require.NoError(t, err)
	require.Equal(t, approvals.Expired, cr.Status, "7 days later it reads expired")
	_, err = h.svc.Approve(ctx, ada, old)
	require.ErrorIs(t, err, approvals.ErrDecided)

	_, err = h.svc.List(ctx, vera, approvals.Filter{Limit: 501})
	var ie *runs.InvalidRequestError
	require.True(t, errors.As(err, &ie))
	require.Equal(t, "limit", ie.Field)
	_, err = h.svc.List(ctx, tenant, approvals.Filter{})
	require.ErrorIs(t, err, runs.ErrForbidden)
}

func TestSealedRequestNeedsTheKey(t *testing.T) {
	t.Parallel()
	h := newHarness(t, xorSealer{})
	id := h.propose(t, otto)
	other := approvals.New(approvals.Deps{Store: h.store, Runs: h.runs, Clock: func() time.Time { return h.now }})
	_, err := other.Approve(context.Background(), ada, id)
	require.ErrorIs(t, err, runs.ErrVaultKeyRequired)
}

func TestTransitionTable(t *testing.T) {
	t.Parallel()
	all := approvals.Statuses()
	require.Equal(t, []approvals.Status{approvals.Proposed, approvals.Approved, approvals.Rejected, approvals.Expired}, all)
	for _, from := range all {
		for _, to := range all {
			err := approvals.Transition(from, to)
			if from == approvals.Proposed && to != approvals.Proposed {
				require.NoError(t, err, "%s → %s", from, to)
			} else {
				require.ErrorIs(t, err, approvals.ErrDecided, "%s → %s", from, to)
			}
		}
	}
	_, err := approvals.ParseStatus("pending")
	require.Error(t, err)
	st, err := approvals.ParseStatus("expired")
	require.NoError(t, err)
	require.Equal(t, approvals.Expired, st)
}
