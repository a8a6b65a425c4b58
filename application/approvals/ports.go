package approvals

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/application/runs"
)

// ChangeRequest is one proposed run request (SPEC §9.5).
type ChangeRequest struct {
	ID          string
	Proposer    string
	Tenant      string
	Name        string // the pipeline name the run will have
	Pool        string // the pool it was proposed with; approval keeps it
	TriggerKind string // what asked (api, mcp, template, …); the run is made with approval
	// Request is the JSON of the stored request, or its vault ciphertext (base64) bound
	// to the change request id when RequestSealed.
	Request       string
	RequestSealed bool
	Status        Status
	CreatedAt     time.Time
	ExpiresAt     time.Time
	DecidedBy     string
	DecidedAt     time.Time // zero while proposed
	RunID         string    // the run approval created
}

// Filter narrows a list; the newest come first.
type Filter struct {
	Status Status // "" = every status; Proposed and Expired are told apart by ExpiresAt
	Now    time.Time
	// After is the id of the last request of the previous page.
	After string
	Limit int
}

// Store keeps change requests.
//
// Errors: run.ErrNotFound for a missing id; ErrDecided when a decision finds the request
// no longer proposed or expired. Implementations translate driver errors at their edge.
type Store interface {
	CreateChangeRequest(ctx context.Context, cr *ChangeRequest) error
	GetChangeRequest(ctx context.Context, id string) (*ChangeRequest, error)
	// ListChangeRequests returns up to f.Limit requests with id < f.After (when set),
	// newest first. A Proposed filter lists unexpired ones at f.Now, Expired the
	// proposed ones past their expiry.
	ListChangeRequests(ctx context.Context, f Filter) ([]*ChangeRequest, error)
	// DecideChangeRequest moves id from proposed to to, recording by, at and runID, in
	// one conditional statement that also requires expires_at > at. Zero rows is
	// ErrDecided (or run.ErrNotFound when the id does not exist), so of two racing
	// deciders exactly one wins.
	DecideChangeRequest(ctx context.Context, id string, to Status, by string, at time.Time, runID string) error
}

// Submitter is the runs funnel approval submits through.
type Submitter interface {
	Submit(ctx context.Context, req runs.SubmitRequest) (runs.SubmitResult, error)
}

// Auditor appends audit entries (SPEC §2.10); the runs store implements it.
type Auditor interface {
	Audit(ctx context.Context, e runs.AuditEntry) error
}

// Backfiller creates the windows of an approved backfill change request as the
// approver (scheduling.Service); request is what ProposeBackfill stored. It answers the
// first window's run.
type Backfiller interface {
	ApproveBackfill(ctx context.Context, p runs.Principal, request []byte) (runID string, err error)
}
