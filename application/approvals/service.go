package approvals

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// TTL is how long a change request waits for a decision (SPEC §9.5).
const TTL = 7 * 24 * time.Hour

// List limits, the same as the run lists'.
const (
	DefaultListLimit = runs.DefaultListLimit
	MaxListLimit     = runs.MaxListLimit
)

// Deps are the ports of the change-request use-cases. Store is required; Runs is
// required to approve; Sealer is the vault (nil: requests are stored as JSON).
type Deps struct {
	Store Store
	Runs  Submitter
	// Backfills creates the windows of an approved backfill; nil refuses to approve one.
	Backfills Backfiller
	Sealer    runs.Sealer
	// Audit records decisions; nil records nothing (tests).
	Audit Auditor
	Log   *slog.Logger           // nil: discard
	Clock func() time.Time       // nil: time.Now
	NewID func() (string, error) // nil: UUIDv7
}

// Service records and decides change requests. It is safe for concurrent use.
type Service struct{ deps Deps }

// New returns the change-request use-cases.
func New(deps Deps) *Service {
	if deps.Clock == nil {
		deps.Clock = time.Now
	}
	if deps.NewID == nil {
		deps.NewID = runs.NewIDSource()
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{deps: deps}
}

var _ runs.Proposer = (*Service)(nil)

// Propose stores req as a change request; the runs funnel calls it after every check a
// submission gets short of creating the run, so a proposal that will never run is
// refused at once. The request is kept whole (params included) and sealed like a
// config when the server has a vault key.
func (s *Service) Propose(ctx context.Context, req runs.SubmitRequest, name, poolName string) (string, error) {
	stored := req
	stored.Principal = runs.Principal{}
	stored.Propose = false
	text, err := json.Marshal(stored)
	if err != nil {
		return "", fmt.Errorf("encode the change request: %w", err)
	}
	return s.create(ctx, req.Principal, req.Tenant, req.TriggerKind, text, name, poolName)
}

// ProposeBackfill stores a whole backfill (the JSON of its request) as ONE change
// request with trigger kind backfill; approval creates its windows through the
// Backfiller (SPEC §9.5).
func (s *Service) ProposeBackfill(ctx context.Context, p runs.Principal, request []byte, name, poolName string) (string, error) {
	return s.create(ctx, p, "", string(run.TriggerBackfill), request, name, poolName)
}

// create stores a change request of kind with its request text, sealed when the server
// has a vault key.
func (s *Service) create(ctx context.Context, p runs.Principal, tenant, kind string, text []byte, name, poolName string) (string, error) {
	id, err := s.deps.NewID()
	if err != nil {
		return "", fmt.Errorf("new change request id: %w", err)
	}
	now := s.deps.Clock().UTC()
	cr := &ChangeRequest{ID: id, Proposer: p.Name, Tenant: tenant, Name: name, Pool: poolName,
		TriggerKind: kind, Request: string(text), Status: Proposed, CreatedAt: now, ExpiresAt: now.Add(TTL)}
	if s.deps.Sealer != nil {
		sealed, err := s.deps.Sealer.Seal(ctx, id, runs.PurposeChangeRequest, text)
		if err != nil {
			return "", fmt.Errorf("seal the change request: %w", err)
		}
		cr.Request, cr.RequestSealed = base64.StdEncoding.EncodeToString(sealed), true
	}
	if err := s.deps.Store.CreateChangeRequest(ctx, cr); err != nil {
		return "", err
	}
	return id, nil
}

// List returns change requests, newest first (any role may read them; they never carry
// the request itself).
func (s *Service) List(ctx context.Context, p runs.Principal, f Filter) ([]*ChangeRequest, error) {
	if err := decider(p, false); err != nil {
		return nil, err
	}
	if f.Limit == 0 {
		f.Limit = DefaultListLimit
	}
	if f.Limit < 1 || f.Limit > MaxListLimit {
		return nil, &runs.InvalidRequestError{Field: "limit", Message: fmt.Sprintf("must be between 1 and %d", MaxListLimit)}
	}
	f.Now = s.deps.Clock().UTC()
	list, err := s.deps.Store.ListChangeRequests(ctx, f)
	if err != nil {
		return nil, err
	}
	for _, cr := range list {
		s.settle(cr, f.Now)
	}
	return list, nil
}

// Get returns one change request.
func (s *Service) Get(ctx context.Context, p runs.Principal, id string) (*ChangeRequest, error) {
	if err := decider(p, false); err != nil {
		return nil, err
	}
	cr, err := s.deps.Store.GetChangeRequest(ctx, id)
	if err != nil {
		return nil, err
	}
	s.settle(cr, s.deps.Clock().UTC())
	return cr, nil
}

// settle shows a proposed request past its expiry as expired: expiry needs no writer.
func (s *Service) settle(cr *ChangeRequest, now time.Time) {
	if cr.Status == Proposed && !now.Before(cr.ExpiresAt) {
		cr.Status = Expired
	}
}

// Approve submits the stored request through the runs funnel (trigger kind approval,
// the proposed pool) and records the run. The approver must be an operator or admin
// other than the proposer. The run gets run key change-request:<id> unless the request
// had its own, so two approvers racing create one run, and only one decision is
// recorded; a submission that fails leaves the request proposed.
func (s *Service) Approve(ctx context.Context, p runs.Principal, id string) (*ChangeRequest, error) {
	cr, text, err := s.decidable(ctx, p, id, Approved)
	if err != nil {
		return nil, err
	}
	runID, err := s.carryOut(ctx, p, cr, text)
	if err != nil {
		return nil, err
	}
	now := s.deps.Clock().UTC()
	if err := s.deps.Store.DecideChangeRequest(ctx, id, Approved, p.Name, now, runID); err != nil {
		return nil, err
	}
	cr.Status, cr.DecidedBy, cr.DecidedAt, cr.RunID = Approved, p.Name, now, runID
	s.audit(ctx, p, ActionApproved, cr)
	return cr, nil
}

// carryOut does what an approved request asks, as the approver: a backfill creates its
// windows (the first window's run is recorded), anything else is submitted as one run.
func (s *Service) carryOut(ctx context.Context, p runs.Principal, cr *ChangeRequest, text []byte) (string, error) {
	if cr.TriggerKind == string(run.TriggerBackfill) {
		if s.deps.Backfills == nil {
			return "", fmt.Errorf("change request %s is a backfill and this server runs no backfills: %w", cr.ID, runs.ErrInvalidRequest)
		}
		return s.deps.Backfills.ApproveBackfill(ctx, p, text)
	}
	var req runs.SubmitRequest
	if err := json.Unmarshal(text, &req); err != nil {
		return "", fmt.Errorf("change request %s: the stored request does not decode: %w", cr.ID, err)
	}
	req.Principal = p
	req.TriggerKind = string(run.TriggerApproval)
	req.Pool = cr.Pool
	if req.RunKey == "" {
		req.RunKey = "change-request:" + cr.ID
	}
	res, err := s.deps.Runs.Submit(ctx, req)
	if err != nil {
		return "", err
	}
	return res.RunID, nil
}

// Reject records the decision; nothing runs.
func (s *Service) Reject(ctx context.Context, p runs.Principal, id string) (*ChangeRequest, error) {
	cr, _, err := s.decidable(ctx, p, id, Rejected)
	if err != nil {
		return nil, err
	}
	now := s.deps.Clock().UTC()
	if err := s.deps.Store.DecideChangeRequest(ctx, id, Rejected, p.Name, now, ""); err != nil {
		return nil, err
	}
	cr.Status, cr.DecidedBy, cr.DecidedAt = Rejected, p.Name, now
	s.audit(ctx, p, ActionRejected, cr)
	return cr, nil
}

// Audit actions of decisions (SPEC §2.10).
const (
	ActionApproved = "change_request.approved"
	ActionRejected = "change_request.rejected"
)

// audit records a decision. Like the runs' audit, a failed write does not undo the
// decision, which is committed; it is logged instead. The details hold no request text.
func (s *Service) audit(ctx context.Context, p runs.Principal, action string, cr *ChangeRequest) {
	if s.deps.Audit == nil {
		return
	}
	e := runs.AuditEntry{At: cr.DecidedAt, Actor: p.Name, Action: action, RunID: cr.RunID,
		Details: map[string]any{"change_request_id": cr.ID, "proposer": cr.Proposer, "name": cr.Name, "pool": cr.Pool}}
	if err := s.deps.Audit.Audit(ctx, e); err != nil {
		s.deps.Log.ErrorContext(ctx, "audit entry not written", "action", action, "change_request_id", cr.ID)
	}
}

// decidable loads a change request p may decide now and opens its request text.
func (s *Service) decidable(ctx context.Context, p runs.Principal, id string, to Status) (*ChangeRequest, []byte, error) {
	if err := decider(p, true); err != nil {
		return nil, nil, err
	}
	cr, err := s.Get(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	if err := Transition(cr.Status, to); err != nil {
		return nil, nil, fmt.Errorf("change request %s: %w", id, err)
	}
	if cr.Proposer == p.Name {
		return nil, nil, fmt.Errorf("%w: principal %q proposed change request %s; another operator or admin must decide it",
			runs.ErrForbidden, p.Name, id)
	}
	text := []byte(cr.Request)
	if cr.RequestSealed {
		if s.deps.Sealer == nil {
			return nil, nil, fmt.Errorf("change request %s is sealed: %w", id, runs.ErrVaultKeyRequired)
		}
		raw, err := base64.StdEncoding.DecodeString(cr.Request)
		if err != nil {
			return nil, nil, fmt.Errorf("change request %s: %w", id, runs.ErrVaultTampered)
		}
		if text, err = s.deps.Sealer.Open(ctx, id, runs.PurposeChangeRequest, raw); err != nil {
			return nil, nil, fmt.Errorf("change request %s: %w", id, err)
		}
	}
	return cr, text, nil
}

// decider: reading needs any role, deciding operator or admin; tenant principals do
// neither (change requests are not tenant routes).
func decider(p runs.Principal, decide bool) error {
	if p.Tenant != "" {
		return fmt.Errorf("%w: tenant principal %q may not use change requests", runs.ErrForbidden, p.Name)
	}
	switch p.Role {
	case runs.Operator, runs.Admin:
		return nil
	case runs.Viewer:
		if !decide {
			return nil
		}
		return fmt.Errorf("%w: deciding a change request needs the operator role; principal %q is viewer", runs.ErrForbidden, p.Name)
	}
	return fmt.Errorf("%w: principal %q has no role", runs.ErrForbidden, p.Name)
}
